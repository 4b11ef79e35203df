//! supraseal-c2's Rust API (curio extern/supraseal-c2 `src/lib.rs`: the same types and
//! functions) proving through zkpipe's libzkpipe_c2 instead of CUDA. The C side is
//! c2/zkpipe_c2.h of zkpipe; its errors are sppark-style `{code, strdup'd message}` freed here.

mod cuda {
    /// sppark's RustError as the C side returns it by value: the message is malloc'd there
    /// and freed here with libc's free.
    #[repr(C)]
    pub struct Error {
        pub code: i32,
        message: Option<core::ptr::NonNull<core::ffi::c_char>>,
    }

    extern "C" {
        fn free(p: *mut core::ffi::c_void);
    }

    impl Drop for Error {
        fn drop(&mut self) {
            if let Some(p) = self.message.take() {
                unsafe { free(p.as_ptr() as *mut _) };
            }
        }
    }

    impl From<Error> for String {
        fn from(e: Error) -> Self {
            match e.message {
                Some(p) => unsafe { core::ffi::CStr::from_ptr(p.as_ptr()) }
                    .to_string_lossy()
                    .into_owned(),
                None => format!("libzkpipe_c2 error {}", e.code),
            }
        }
    }

    impl core::fmt::Debug for Error {
        fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
            let m = match self.message {
                Some(p) => unsafe { core::ffi::CStr::from_ptr(p.as_ptr()) }.to_string_lossy().into_owned(),
                None => String::new(),
            };
            write!(f, "Error {{ code: {}, message: {:?} }}", self.code, m)
        }
    }
}
pub use cuda::Error;

use std::path::PathBuf;

/// A proving key (bellman .params) opened by libzkpipe_c2; refcounted on the C side.
#[repr(C)]
pub struct SRS {
    ptr: *const core::ffi::c_void,
}

impl Default for SRS {
    fn default() -> Self {
        SRS { ptr: core::ptr::null() }
    }
}

extern "C" {
    fn create_SRS(ret: &mut SRS, srs_path: *const core::ffi::c_char, cache: bool) -> cuda::Error;
    fn evict_SRS(by_ref: &SRS);
    fn drop_SRS(by_ref: &SRS);
    fn clone_SRS(by_ref: &SRS) -> SRS;
    fn create_gpu_mutex() -> *mut core::ffi::c_void;
    fn destroy_gpu_mutex(mtx: *mut core::ffi::c_void);
    fn generate_groth16_proofs_c(
        provers: *const core::ffi::c_void,
        num_circuits: usize,
        r_s: *const core::ffi::c_void,
        s_s: *const core::ffi::c_void,
        proofs: *mut core::ffi::c_void,
        srs: &SRS,
        gpu_mtx: *mut core::ffi::c_void,
        gpu_index: i32,
    ) -> cuda::Error;
    fn generate_groth16_proofs_start_c(
        provers: *const core::ffi::c_void,
        num_circuits: usize,
        r_s: *const core::ffi::c_void,
        s_s: *const core::ffi::c_void,
        srs: &SRS,
        gpu_mtx: *mut core::ffi::c_void,
        gpu_index: i32,
        pending_out: *mut *mut core::ffi::c_void,
    ) -> cuda::Error;
    fn finalize_groth16_proof_c(handle: *mut core::ffi::c_void, proofs: *mut core::ffi::c_void) -> cuda::Error;
    fn destroy_pending_proof(handle: *mut core::ffi::c_void);
}

impl SRS {
    pub fn try_new(srs_path: PathBuf, cache: bool) -> Result<Self, cuda::Error> {
        let path = std::ffi::CString::new(srs_path.to_str().expect("SRS path is not UTF-8"))
            .expect("SRS path has a NUL byte");
        let mut ret = SRS::default();
        let err = unsafe { create_SRS(&mut ret, path.as_ptr(), cache) };
        if err.code != 0 {
            Err(err)
        } else {
            Ok(ret)
        }
    }

    pub fn evict(&self) {
        unsafe { evict_SRS(self) }
    }
}

impl Drop for SRS {
    fn drop(&mut self) {
        unsafe { drop_SRS(self) }
    }
}

impl Clone for SRS {
    fn clone(&self) -> Self {
        unsafe { clone_SRS(self) }
    }
}

unsafe impl Sync for SRS {}
unsafe impl Send for SRS {}

/// supraseal-c2's Assignment: 17 machine words, nothing owned.
#[repr(C)]
pub struct Assignment<Scalar> {
    pub a_aux_density: *const usize,
    pub a_aux_bit_len: usize,
    pub a_aux_popcount: usize,
    pub b_inp_density: *const usize,
    pub b_inp_bit_len: usize,
    pub b_inp_popcount: usize,
    pub b_aux_density: *const usize,
    pub b_aux_bit_len: usize,
    pub b_aux_popcount: usize,
    pub a: *const Scalar,
    pub b: *const Scalar,
    pub c: *const Scalar,
    pub abc_size: usize,
    pub inp_assignment_data: *const Scalar,
    pub inp_assignment_size: usize,
    pub aux_assignment_data: *const Scalar,
    pub aux_assignment_size: usize,
}

pub fn alloc_gpu_mutex() -> *mut core::ffi::c_void {
    unsafe { create_gpu_mutex() }
}

/// # Safety
/// `ptr` comes from `alloc_gpu_mutex` and is freed once.
pub unsafe fn free_gpu_mutex(ptr: *mut core::ffi::c_void) {
    destroy_gpu_mutex(ptr)
}

#[allow(clippy::too_many_arguments)]
fn assignments<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
) -> Vec<Assignment<S>> {
    for (name, len) in [
        ("ntt_a_scalars", ntt_a_scalars.len()),
        ("ntt_b_scalars", ntt_b_scalars.len()),
        ("ntt_c_scalars", ntt_c_scalars.len()),
        ("input_assignments", input_assignments.len()),
        ("aux_assignments", aux_assignments.len()),
        ("r_s", r_s.len()),
        ("s_s", s_s.len()),
    ] {
        assert_eq!(len, num_circuits, "{} has {} entries for {} circuits", name, len, num_circuits);
    }
    assert_eq!(std::mem::size_of::<D>(), 8, "only 64-bit elements in bit vectors are supported");
    assert!(a_aux_density_bv.len() * 64 >= aux_assignments_size, "a_aux_density_bv too short");
    assert!(b_g1_aux_density_bv.len() * 64 >= aux_assignments_size, "b_g1_aux_density_bv too short");
    assert!(b_g1_input_density_bv.len() * 64 >= input_assignments_size, "b_g1_input_density_bv too short");
    (0..num_circuits)
        .map(|i| Assignment::<S> {
            a_aux_density: a_aux_density_bv.as_ptr() as *const usize,
            a_aux_bit_len: aux_assignments_size,
            a_aux_popcount: a_aux_total_density,
            b_inp_density: b_g1_input_density_bv.as_ptr() as *const usize,
            b_inp_bit_len: input_assignments_size,
            b_inp_popcount: b_g1_input_total_density,
            b_aux_density: b_g1_aux_density_bv.as_ptr() as *const usize,
            b_aux_bit_len: aux_assignments_size,
            b_aux_popcount: b_g1_aux_total_density,
            a: ntt_a_scalars[i],
            b: ntt_b_scalars[i],
            c: ntt_c_scalars[i],
            abc_size: ntt_scalars_actual_size,
            inp_assignment_data: input_assignments[i],
            inp_assignment_size: input_assignments_size,
            aux_assignment_data: aux_assignments[i],
            aux_assignment_size: aux_assignments_size,
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
pub fn generate_groth16_proof<S, D, PR>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    proofs: &mut [PR],
    srs: &SRS,
    gpu_mtx: *mut core::ffi::c_void,
    gpu_index: i32,
) {
    assert_eq!(proofs.len(), num_circuits, "proofs has room for {} of {} circuits", proofs.len(), num_circuits);
    let provers = assignments(
        ntt_a_scalars, ntt_b_scalars, ntt_c_scalars, ntt_scalars_actual_size, input_assignments,
        aux_assignments, input_assignments_size, aux_assignments_size, a_aux_density_bv,
        b_g1_input_density_bv, b_g1_aux_density_bv, a_aux_total_density, b_g1_input_total_density,
        b_g1_aux_total_density, num_circuits, r_s, s_s,
    );
    let err = unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr() as *const _,
            num_circuits,
            r_s.as_ptr() as *const _,
            s_s.as_ptr() as *const _,
            proofs.as_mut_ptr() as *mut _,
            srs,
            gpu_mtx,
            gpu_index,
        )
    };
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
}

/// Starts the proofs and returns the pending handle (finish_groth16_proof or
/// drop_pending_proof consume it). a, b, c may be freed on return.
#[allow(clippy::too_many_arguments)]
pub fn start_groth16_proof<S, D>(
    ntt_a_scalars: &[*const S],
    ntt_b_scalars: &[*const S],
    ntt_c_scalars: &[*const S],
    ntt_scalars_actual_size: usize,
    input_assignments: &[*const S],
    aux_assignments: &[*const S],
    input_assignments_size: usize,
    aux_assignments_size: usize,
    a_aux_density_bv: &[D],
    b_g1_input_density_bv: &[D],
    b_g1_aux_density_bv: &[D],
    a_aux_total_density: usize,
    b_g1_input_total_density: usize,
    b_g1_aux_total_density: usize,
    num_circuits: usize,
    r_s: &[S],
    s_s: &[S],
    srs: &SRS,
    gpu_mtx: *mut core::ffi::c_void,
    gpu_index: i32,
) -> *mut core::ffi::c_void {
    let provers = assignments(
        ntt_a_scalars, ntt_b_scalars, ntt_c_scalars, ntt_scalars_actual_size, input_assignments,
        aux_assignments, input_assignments_size, aux_assignments_size, a_aux_density_bv,
        b_g1_input_density_bv, b_g1_aux_density_bv, a_aux_total_density, b_g1_input_total_density,
        b_g1_aux_total_density, num_circuits, r_s, s_s,
    );
    let mut pending: *mut core::ffi::c_void = core::ptr::null_mut();
    let err = unsafe {
        generate_groth16_proofs_start_c(
            provers.as_ptr() as *const _,
            num_circuits,
            r_s.as_ptr() as *const _,
            s_s.as_ptr() as *const _,
            srs,
            gpu_mtx,
            gpu_index,
            &mut pending,
        )
    };
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
    pending
}

/// Waits for the pending proofs and writes them; consumes the handle.
pub fn finish_groth16_proof<PR>(handle: *mut core::ffi::c_void, proofs: &mut [PR]) {
    let err = unsafe { finalize_groth16_proof_c(handle, proofs.as_mut_ptr() as *mut _) };
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
}

/// # Safety
/// `handle` comes from `start_groth16_proof` and was neither finished nor dropped
/// (libzkpipe_c2 ignores a stale one rather than dereferencing it).
pub unsafe fn drop_pending_proof(handle: *mut core::ffi::c_void) {
    destroy_pending_proof(handle)
}

pub fn generate_groth16_proofs<S, PR>(provers: &[Assignment<S>], r_s: &[S], s_s: &[S], proofs: &mut [PR], srs: &SRS) {
    let n = provers.len();
    assert_eq!(r_s.len(), n);
    assert_eq!(s_s.len(), n);
    assert_eq!(proofs.len(), n);
    let err = unsafe {
        generate_groth16_proofs_c(
            provers.as_ptr() as *const _,
            n,
            r_s.as_ptr() as *const _,
            s_s.as_ptr() as *const _,
            proofs.as_mut_ptr() as *mut _,
            srs,
            core::ptr::null_mut(),
            -1,
        )
    };
    if err.code != 0 {
        panic!("{}", String::from(err));
    }
}
