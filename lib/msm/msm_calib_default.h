/* msm_calib_default.h - the built-in MSM calibration table (msm_calib.c): rows
 * {group, curve (0 bn254, 1 bls12_381), witness, log2n, endo ms, plain ms}: one-thread process
 * CPU ms of the split (endo) and the plain MSM run alternately in one process, on the machine
 * named in msm_calib.c, 2026-12-04, load 1-18 (other builds): the mean over the runs counted
 * in each row's comment, from `zkpipe bench arith --msm-only --threads 1 --endo both
 * --scalars both --cpu` (2^12..2^20, and 2^22 uniform), `zkpipe bench arith --json --cpu
 * --scalars uniform` (2^12, 2^14..2^22, twice at 2^16, 17, 19..21) and a timing build's run at
 * 2^18 and 2^20 (doc/msm.md).
 * `zkpipe msm calibrate --c-table` prints rows in this form (one run). Witness-like scalars
 * up to 2^20 (the split wins by 20-40% there). */
    {1, 0, 0, 12, 23.1f, 26.5f}, /* 2 runs, endo/plain 0.871 */
    {1, 0, 0, 14, 71.3f, 76.4f}, /* 2 runs, endo/plain 0.934 */
    {1, 0, 0, 15, 132.1f, 141.8f}, /* 1 run, endo/plain 0.931 */
    {1, 0, 0, 16, 261.4f, 255.4f}, /* 3 runs, endo/plain 1.024 */
    {1, 0, 0, 17, 518.3f, 501.1f}, /* 2 runs, endo/plain 1.034 */
    {1, 0, 0, 18, 886.6f, 850.6f}, /* 3 runs, endo/plain 1.042 */
    {1, 0, 0, 19, 1716.3f, 1673.0f}, /* 2 runs, endo/plain 1.026 */
    {1, 0, 0, 20, 3398.9f, 3182.2f}, /* 3 runs, endo/plain 1.068 */
    {1, 0, 0, 21, 6905.1f, 6315.9f}, /* 2 runs, endo/plain 1.093 */
    {1, 0, 0, 22, 13851.9f, 12572.7f}, /* 2 runs, endo/plain 1.102 */
    {1, 0, 1, 12, 5.2f, 7.3f}, /* 1 run, endo/plain 0.712 */
    {1, 0, 1, 14, 14.9f, 22.2f}, /* 1 run, endo/plain 0.671 */
    {1, 0, 1, 16, 50.6f, 70.2f}, /* 1 run, endo/plain 0.721 */
    {1, 0, 1, 18, 204.2f, 274.4f}, /* 1 run, endo/plain 0.744 */
    {1, 0, 1, 20, 832.5f, 1034.0f}, /* 1 run, endo/plain 0.805 */
    {1, 1, 0, 12, 40.2f, 45.8f}, /* 2 runs, endo/plain 0.876 */
    {1, 1, 0, 14, 130.2f, 136.4f}, /* 2 runs, endo/plain 0.954 */
    {1, 1, 0, 15, 226.1f, 248.0f}, /* 1 run, endo/plain 0.912 */
    {1, 1, 0, 16, 449.4f, 451.4f}, /* 3 runs, endo/plain 0.996 */
    {1, 1, 0, 17, 861.3f, 895.5f}, /* 2 runs, endo/plain 0.962 */
    {1, 1, 0, 18, 1500.9f, 1612.8f}, /* 3 runs, endo/plain 0.931 */
    {1, 1, 0, 19, 2986.8f, 2969.1f}, /* 2 runs, endo/plain 1.006 */
    {1, 1, 0, 20, 5687.3f, 5475.7f}, /* 3 runs, endo/plain 1.039 */
    {1, 1, 0, 21, 12205.4f, 11557.3f}, /* 2 runs, endo/plain 1.056 */
    {1, 1, 0, 22, 22451.4f, 21041.1f}, /* 2 runs, endo/plain 1.067 */
    {1, 1, 1, 12, 9.0f, 12.7f}, /* 1 run, endo/plain 0.709 */
    {1, 1, 1, 14, 23.7f, 37.5f}, /* 1 run, endo/plain 0.632 */
    {1, 1, 1, 16, 85.7f, 122.9f}, /* 1 run, endo/plain 0.697 */
    {1, 1, 1, 18, 309.4f, 434.8f}, /* 1 run, endo/plain 0.712 */
    {1, 1, 1, 20, 1210.1f, 1674.0f}, /* 1 run, endo/plain 0.723 */
    {2, 0, 0, 12, 48.5f, 51.6f}, /* 2 runs, endo/plain 0.941 */
    {2, 0, 0, 14, 155.0f, 168.6f}, /* 2 runs, endo/plain 0.919 */
    {2, 0, 0, 15, 273.3f, 309.9f}, /* 1 run, endo/plain 0.882 */
    {2, 0, 0, 16, 528.0f, 540.7f}, /* 2 runs, endo/plain 0.976 */
    {2, 0, 0, 17, 987.9f, 1024.7f}, /* 1 run, endo/plain 0.964 */
    {2, 0, 0, 18, 1819.8f, 1858.3f}, /* 3 runs, endo/plain 0.979 */
    {2, 0, 0, 19, 3624.6f, 3635.2f}, /* 2 runs, endo/plain 0.997 */
    {2, 0, 0, 20, 6914.8f, 6789.8f}, /* 4 runs, endo/plain 1.018 */
    {2, 0, 0, 21, 13777.6f, 13061.3f}, /* 1 run, endo/plain 1.055 */
    {2, 0, 0, 22, 27558.9f, 26381.0f}, /* 2 runs, endo/plain 1.045 */
    {2, 0, 1, 12, 9.3f, 15.4f}, /* 1 run, endo/plain 0.604 */
    {2, 0, 1, 14, 28.2f, 44.6f}, /* 1 run, endo/plain 0.632 */
    {2, 0, 1, 16, 98.3f, 149.3f}, /* 1 run, endo/plain 0.658 */
    {2, 0, 1, 18, 368.3f, 557.0f}, /* 1 run, endo/plain 0.661 */
    {2, 0, 1, 20, 1405.0f, 2011.7f}, /* 1 run, endo/plain 0.698 */
    {2, 1, 0, 12, 90.1f, 97.6f}, /* 2 runs, endo/plain 0.923 */
    {2, 1, 0, 14, 289.2f, 318.5f}, /* 2 runs, endo/plain 0.908 */
    {2, 1, 0, 15, 519.7f, 572.7f}, /* 1 run, endo/plain 0.908 */
    {2, 1, 0, 16, 1000.4f, 1043.5f}, /* 2 runs, endo/plain 0.959 */
    {2, 1, 0, 17, 1792.9f, 1949.4f}, /* 1 run, endo/plain 0.920 */
    {2, 1, 0, 18, 3490.8f, 3869.7f}, /* 3 runs, endo/plain 0.902 */
    {2, 1, 0, 19, 6919.3f, 7065.0f}, /* 2 runs, endo/plain 0.979 */
    {2, 1, 0, 20, 14010.5f, 13675.7f}, /* 4 runs, endo/plain 1.024 */
    {2, 1, 0, 21, 30646.1f, 27922.6f}, /* 1 run, endo/plain 1.098 */
    {2, 1, 0, 22, 54848.2f, 48363.9f}, /* 1 run, endo/plain 1.134 */
    {2, 1, 1, 12, 16.0f, 25.8f}, /* 1 run, endo/plain 0.620 */
    {2, 1, 1, 14, 51.8f, 83.1f}, /* 1 run, endo/plain 0.623 */
    {2, 1, 1, 16, 181.2f, 278.7f}, /* 1 run, endo/plain 0.650 */
    {2, 1, 1, 18, 642.8f, 985.5f}, /* 1 run, endo/plain 0.652 */
    {2, 1, 1, 20, 2578.5f, 3606.8f}, /* 1 run, endo/plain 0.715 */
