/* test_shm_memory.c - doc/memory.md's numbers are the code's: every row of its table (bytes of
 * shared memory per slot and per proving key at domains 2^20, 2^24, 2^27 on both curves) is
 * recomputed from the layout code (zp_shm_slot_bytes_for, ZP_SHM_DESC_BYTES, zp_g16_key_bytes,
 * zp_keystore_object_bytes) and must match to the byte; every size must have its row.
 *   test_shm_memory --print   prints the table rows (to regenerate the document) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fmt/fmt.h"
#include "lib/groth16/groth16.h"
#include "shm/keystore.h"
#include "shm/shm.h"

static const unsigned powers[3] = {20, 24, 27};
static const struct { zp_curve_id_t c; const char *name; } curves[2] = {{ZP_CURVE_BN254, "bn254"},
                                                                        {ZP_CURVE_BLS12_381, "bls12-381"}};

typedef struct { uint64_t extent, slot, key, store; } row_t;

/* the document's circuit at domain 2^p: 2^p variables, 1 public signal, 2 coefficients per
 * row (one A and one B term: the zkey's coefs section grows with the real count) */
static row_t compute(zp_curve_id_t c, unsigned p)
{
    row_t r;
    uint32_t n = 1u << p;
    zp_zkey_t z;
    memset(&z, 0, sizeof z);
    z.curve = c;
    z.n_vars = n; z.n_public = 1; z.domain_size = n; z.log_n = p; z.n_coefs = 2 * n;
    r.extent = zp_shm_slot_bytes_for(n, n, 32);
    r.slot = r.extent + ZP_SHM_DESC_BYTES;
    r.key = zp_g16_key_bytes(&z);
    r.store = zp_keystore_object_bytes(r.key);
    return r;
}

static double gib(uint64_t v) { return (double)v / (1u << 30); }

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--print")) {
        for (unsigned ci = 0; ci < 2; ci++)
            for (unsigned i = 0; i < 3; i++) {
                row_t r = compute(curves[ci].c, powers[i]);
                printf("| %s | 2^%u | %" PRIu64 " | %" PRIu64 " | %.3f | %" PRIu64 " | %" PRIu64 " | %.3f |\n", curves[ci].name,
                       powers[i], r.extent, r.slot, gib(r.slot), r.key, r.store, gib(r.store));
            }
        return 0;
    }
    const char *path = ZP_SOURCE_ROOT "/doc/memory.md";
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "%s: cannot open\n", path); return 1; }
    char line[1024];
    int fails = 0, seen[2][3] = {{0}};
    unsigned ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char cname[32];
        unsigned p;
        uint64_t extent, slot, key, store;
        double sg, kg;
        if (sscanf(line, "| %31s | 2^%u | %" SCNu64 " | %" SCNu64 " | %lf | %" SCNu64 " | %" SCNu64 " | %lf |", cname, &p,
                   &extent, &slot, &sg, &key, &store, &kg) != 8)
            continue;
        int ci = !strcmp(cname, "bn254") ? 0 : !strcmp(cname, "bls12-381") ? 1 : -1;
        int pi = p == 20 ? 0 : p == 24 ? 1 : p == 27 ? 2 : -1;
        if (ci < 0 || pi < 0) { fprintf(stderr, "%s:%u: unknown row (%s 2^%u)\n", path, ln, cname, p); fails++; continue; }
        seen[ci][pi]++;
        row_t r = compute(curves[ci].c, p);
        char want[200];
        snprintf(want, sizeof want, "%.3f %.3f", gib(r.slot), gib(r.store));
        char got[200];
        snprintf(got, sizeof got, "%.3f %.3f", sg, kg);
        if (extent != r.extent || slot != r.slot || key != r.key || store != r.store || strcmp(want, got)) {
            fprintf(stderr, "%s:%u: %s 2^%u says extent %" PRIu64 ", slot %" PRIu64 ", key %" PRIu64 ", store %" PRIu64
                    " (GiB %s); the code gives %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64 " (GiB %s)\n", path, ln,
                    cname, p, extent, slot, key, store, got, r.extent, r.slot, r.key, r.store, want);
            fails++;
        }
    }
    fclose(f);
    for (unsigned ci = 0; ci < 2; ci++)
        for (unsigned i = 0; i < 3; i++)
            if (seen[ci][i] != 1) {
                fprintf(stderr, "%s: %d rows for %s at 2^%u (want exactly 1)\n", path, seen[ci][i], curves[ci].name, powers[i]);
                fails++;
            }
    if (fails) { printf("shm_memory: %d mismatch(es): regenerate the table with test_shm_memory --print\n", fails); return 1; }
    printf("shm_memory: doc/memory.md matches the layout code (6 rows)\n");
    return 0;
}
