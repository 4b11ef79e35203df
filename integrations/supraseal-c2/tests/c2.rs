// The crate's API in cuzk's role, against libzkpipe_c2 (ZKPIPE_C2_MODE from
// ZKPIPE_C2_HARNESS_MODE: inprocess by default, group against a running `zkpipe up`, as
// tests/c2_rust.sh runs it both ways): upstream
// bellman's dumped ProvingAssignment (zkpipe tests/fixtures/bellman/<name>/dump) proved at
// r = 5, s = 9 gives the 384-byte blst proof whose bellman encoding is bellman's proof
// (tests/test_c2.c checks proof_r5_s9.blst against proof_r5_s9.bin); batch of 2 through
// start/finish, drop of a pending proof, a path that is not a parameters file.
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
    for name in ["chain300", "poseidon2"] {
        let dir = fixtures().join(name);
        let d = dir.join("dump");
        let m = std::fs::read_to_string(d.join("meta.json")).unwrap();
        let (a, b, c) = (frs(&d.join("a.bin")), frs(&d.join("b.bin")), frs(&d.join("c.bin")));
        let (inp, aux) = (frs(&d.join("inp.bin")), frs(&d.join("aux.bin")));
        let (da, dbi, dba) = (words(&d.join("a_aux.bits")), words(&d.join("b_inp.bits")), words(&d.join("b_aux.bits")));
        let srs = SRS::try_new(dir.join("circuit.params"), true).expect("create_SRS");
        let srs2 = srs.clone();
        let want = std::fs::read(dir.join("proof_r5_s9.blst")).unwrap();
        assert_eq!(want.len(), 384);

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
        assert!(proofs[0][..] == want[..], "{}: proof differs from bellman's", name);

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
