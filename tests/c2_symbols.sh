#!/bin/sh
# c2_symbols.sh LIB: libzkpipe_c2 exports exactly supraseal-c2's functions and zkpipe's three a/b/c allocator calls (c2/c2.map), nothing of libzkpipe.
set -e
lib=$1
want="clone_SRS create_SRS create_gpu_mutex destroy_gpu_mutex destroy_pending_proof drop_SRS evict_SRS finalize_groth16_proof_c generate_groth16_proofs_c generate_groth16_proofs_start_c zkpipe_c2_alloc_abc zkpipe_c2_bytes_copied zkpipe_c2_free_abc"
got=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBVWRi]$/ {print $3}' | sed 's/@.*//' | sort | tr '\n' ' ' | sed 's/ $//')
if [ "$got" != "$want" ]; then
    echo "exported: $got"
    echo "expected: $want"
    exit 1
fi
echo "c2_symbols: ok ($want)"
