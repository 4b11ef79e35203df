// The crate's API in cuzk's role, against libzkpipe_c2 (ZKPIPE_C2_MODE from
// ZKPIPE_C2_HARNESS_MODE: inprocess by default, group against a running `zkpipe up`, as
// tests/c2_rust.sh runs it both ways): upstream
// bellman's dumped ProvingAssignment (every $ZKPIPE_FIXTURES/bellman/<name>/dump, zkpipe's
// tests/fixtures by default) proved at r = 5, s = 9 gives a 384-byte blst proof whose bellman
// encoding (compressed here, bellman_bytes) is bellman's own proof_r5_s9.bin byte for byte (and
// equals the pinned proof_r5_s9.blst where a fixture has one); batch of 2 through start/finish,
// drop of a pending proof, a path that is not a parameters file.
use std::path::PathBuf;
use supraseal_c2::*;

type Fr = [u64; 4];

const R_MOD: Fr = [0x00000001fffffffe, 0x5884b7fa00034802, 0x998c4fefecbc4ff5, 0x1824b159acc5056f];
const MODULUS: Fr = [0xffffffff00000001, 0x53bda402fffe5bfe, 0x3339d80809a1d805, 0x73eda753299d7d48];

fn add_mod(a: &Fr, b: &Fr) -> Fr {
    let mut r = [0u64; 4];
    let mut carry = 0u128;
    for i in 0..4 {
        let t = a[i] as u128 + b[i] as u128 + carry;
        r[i] = t as u64;
        carry = t >> 64;
    }
    let ge = carry != 0 || (0..4).rev().find(|&i| r[i] != MODULUS[i]).map_or(true, |i| r[i] > MODULUS[i]);
    if ge {
        let mut borrow = 0i128;
        for i in 0..4 {
            let t = r[i] as i128 - MODULUS[i] as i128 - borrow;
            r[i] = t as u64;
            borrow = if t < 0 { 1 } else { 0 };
        }
    }
    r
}

/// Montgomery form of v (v * R mod r), as bls12_381::Scalar holds it
fn fr(v: u64) -> Fr {
    let mut acc = [0u64; 4];
    for _ in 0..v {
        acc = add_mod(&acc, &R_MOD);
    }
    acc
}

/// the library's mode for this run (set before any call; every test sets the same value)
fn set_mode() {
    let m = std::env::var("ZKPIPE_C2_HARNESS_MODE").unwrap_or_else(|_| "inprocess".into());
    std::env::set_var("ZKPIPE_C2_MODE", m);
}

// ---- bellman's Proof::write of a 384-byte blst proof (to compare with bellman's own .bin) ----
const P: [u64; 6] = [0xb9feffffffffaaab, 0x1eabfffeb153ffff, 0x6730d2a0f6b0f624, 0x64774b84f38512bf,
                     0x4b1ba7b6434bacd7, 0x1a0111ea397fe69a];
const P_INV: u64 = 0x89f3fffcfffcfffd;   // -p^-1 mod 2^64

/// a Montgomery Fp element (6 little-endian limbs, R = 2^384) in standard form
fn fp_from_mont(a: &[u64; 6]) -> [u64; 6] {
    let mut t = [0u64; 13];
    t[..6].copy_from_slice(a);
    for i in 0..6 {
        let m = t[i].wrapping_mul(P_INV);
        let mut carry = 0u128;
        for j in 0..6 {
            let v = t[i + j] as u128 + (m as u128) * (P[j] as u128) + carry;
            t[i + j] = v as u64;
            carry = v >> 64;
        }
        let mut k = i + 6;
        while carry != 0 {
            let v = t[k] as u128 + carry;
            t[k] = v as u64;
            carry = v >> 64;
            k += 1;
        }
    }
    let mut r = [0u64; 6];
    r.copy_from_slice(&t[6..12]);
    if (0..6).rev().find(|&i| r[i] != P[i]).map_or(true, |i| r[i] > P[i]) {
        let mut borrow = 0i128;
        for i in 0..6 {
            let v = r[i] as i128 - P[i] as i128 - borrow;
            r[i] = v as u64;
            borrow = if v < 0 { 1 } else { 0 };
        }
    }
    r
}

fn limbs(b: &[u8]) -> [u64; 6] {
    let mut r = [0u64; 6];
    for (i, c) in b.chunks(8).enumerate() {
        r[i] = u64::from_le_bytes(c.try_into().unwrap());
    }
    r
}

/// y > (p - 1) / 2, i.e. y is the lexicographically largest of y, -y (zcash's sign bit)
fn fp_largest(y: &[u64; 6]) -> bool {
    let mut h = [0u64; 6];   // (p - 1) / 2
    for i in 0..6 {
        h[i] = (P[i] >> 1) | if i < 5 { P[i + 1] << 63 } else { 0 };
    }
    (0..6).rev().find(|&i| y[i] != h[i]).map_or(false, |i| y[i] > h[i])
}

fn be(out: &mut Vec<u8>, x: &[u64; 6]) {
    for i in (0..6).rev() {
        out.extend_from_slice(&x[i].to_be_bytes());
    }
}

/// the 192-byte Proof::write of a 384-byte groth16_proof (A G1, B G2, C G1, affine Montgomery,
/// (0, 0) for infinity): compressed zcash points, A, B, C
fn bellman_bytes(p: &[u8; 384]) -> Vec<u8> {
    let mut out = Vec::with_capacity(192);
    let g1 = |out: &mut Vec<u8>, b: &[u8]| {
        let at = out.len();
        if b.iter().all(|&v| v == 0) {
            out.extend_from_slice(&[0u8; 48]);
            out[at] = 0xc0;
            return;
        }
        let (x, y) = (fp_from_mont(&limbs(&b[..48])), fp_from_mont(&limbs(&b[48..96])));
        be(out, &x);
        out[at] |= 0x80 | if fp_largest(&y) { 0x20 } else { 0 };
    };
    g1(&mut out, &p[..96]);
    let b = &p[96..288];
    let at = out.len();
    if b.iter().all(|&v| v == 0) {
        out.extend_from_slice(&[0u8; 96]);
        out[at] = 0xc0;
    } else {
        let f = |k: usize| fp_from_mont(&limbs(&b[48 * k..48 * k + 48]));
        let (x0, x1, y0, y1) = (f(0), f(1), f(2), f(3));
        be(&mut out, &x1);
        be(&mut out, &x0);
        let big = if y1.iter().any(|&v| v != 0) { fp_largest(&y1) } else { fp_largest(&y0) };
        out[at] |= 0x80 | if big { 0x20 } else { 0 };
    }
    g1(&mut out, &p[288..384]);
    out
}

fn fixtures() -> PathBuf {
    std::env::var_os("ZKPIPE_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures"))
        .join("bellman")
}

fn words(p: &PathBuf) -> Vec<u64> {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {}", p.display(), e));
    b.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn frs(p: &PathBuf) -> Vec<Fr> {
    words(p).chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

fn meta(m: &str, key: &str) -> usize {
    let k = format!("\"{}\": ", key);
    let i = m.find(&k).unwrap_or_else(|| panic!("meta.json: no {}", key)) + k.len();
    m[i..].chars().take_while(|c| c.is_ascii_digit()).collect::<String>().parse().unwrap()
}

#[test]
fn proofs_equal_bellman() {
    set_mode();
    // every fixture directory with a dump (bellman-made data dropped in beside them is proved too)
    let mut names: Vec<String> = std::fs::read_dir(fixtures())
        .unwrap_or_else(|e| panic!("{}: {}", fixtures().display(), e))
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("dump/meta.json").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(!names.is_empty(), "{}: no */dump/meta.json", fixtures().display());
    for name in names {
        let dir = fixtures().join(&name);
        let d = dir.join("dump");
        let m = std::fs::read_to_string(d.join("meta.json")).unwrap();
        let (a, b, c) = (frs(&d.join("a.bin")), frs(&d.join("b.bin")), frs(&d.join("c.bin")));
        let (inp, aux) = (frs(&d.join("inp.bin")), frs(&d.join("aux.bin")));
        let (da, dbi, dba) = (words(&d.join("a_aux.bits")), words(&d.join("b_inp.bits")), words(&d.join("b_aux.bits")));
        let srs = SRS::try_new(dir.join("circuit.params"), true).expect("create_SRS");
        let srs2 = srs.clone();
        // bellman's own bytes (proof_r5_s9.bin, as bellman wrote it) are the reference; the
        // pinned 384-byte form (proof_r5_s9.blst) is compared too where a fixture has one
        let bellman = std::fs::read(dir.join("proof_r5_s9.bin")).unwrap();
        assert_eq!(bellman.len(), 192, "{}: proof_r5_s9.bin", name);

        let mut proofs = vec![[0u8; 384]; 1];
        let mtx = alloc_gpu_mutex();
        generate_groth16_proof(
            &[a.as_ptr()], &[b.as_ptr()], &[c.as_ptr()], meta(&m, "abc_size"),
            &[inp.as_ptr()], &[aux.as_ptr()], inp.len(), aux.len(),
            &da, &dbi, &dba,
            meta(&m, "a_aux_popcount"), meta(&m, "b_inp_popcount"), meta(&m, "b_aux_popcount"),
            1, &[fr(5)], &[fr(9)], &mut proofs, &srs2, mtx, -1,
        );
        unsafe { free_gpu_mutex(mtx) };
        assert!(bellman_bytes(&proofs[0]) == bellman, "{}: proof differs from bellman's", name);
        if let Ok(pinned) = std::fs::read(dir.join("proof_r5_s9.blst")) {
            assert!(proofs[0][..] == pinned[..], "{}: proof differs from the pinned blst form", name);
        }
        let want = proofs[0];

        // a batch of 2 through start / finish: circuit 1 at other r, s differs
        let h = start_groth16_proof(
            &[a.as_ptr(), a.as_ptr()], &[b.as_ptr(), b.as_ptr()], &[c.as_ptr(), c.as_ptr()], meta(&m, "abc_size"),
            &[inp.as_ptr(), inp.as_ptr()], &[aux.as_ptr(), aux.as_ptr()], inp.len(), aux.len(),
            &da, &dbi, &dba,
            meta(&m, "a_aux_popcount"), meta(&m, "b_inp_popcount"), meta(&m, "b_aux_popcount"),
            2, &[fr(5), fr(6)], &[fr(9), fr(9)], &srs, std::ptr::null_mut(), -1,
        );
        let mut two = vec![[0u8; 384]; 2];
        finish_groth16_proof(h, &mut two);
        assert!(two[0][..] == want[..]);
        assert!(two[1][..] != want[..]);

        // abandoned
        let h = start_groth16_proof(
            &[a.as_ptr()], &[b.as_ptr()], &[c.as_ptr()], meta(&m, "abc_size"),
            &[inp.as_ptr()], &[aux.as_ptr()], inp.len(), aux.len(),
            &da, &dbi, &dba,
            meta(&m, "a_aux_popcount"), meta(&m, "b_inp_popcount"), meta(&m, "b_aux_popcount"),
            1, &[fr(5)], &[fr(9)], &srs, std::ptr::null_mut(), 0,
        );
        unsafe { drop_pending_proof(h) };
        srs.evict();
    }
}

#[test]
fn not_a_parameters_file() {
    set_mode();
    let p = fixtures().join("chain300/dump/meta.json");
    let e = SRS::try_new(p, false).err().expect("meta.json is not a parameters file");
    assert!(e.code != 0);
    let msg = String::from(e);
    assert!(msg.contains("not a bellman parameters file"), "{}", msg);
}
