/* fuzz.h - shared by the fuzz harnesses in tests/fuzz/ (README there).
 * Each harness defines LLVMFuzzerTestOneInput (libFuzzer's entry point). With clang it is
 * linked with -fsanitize=fuzzer; otherwise with driver.c, which replays the seed corpus and then
 * runs a fixed number of seeded mutations, so every build runs the harnesses in the unit suite.
 * A harness aborts (FUZZ_ASSERT) only on a broken property of ours: a crash, a sanitizer report
 * or an assertion is a finding; a clean error return for bad input is the expected outcome. */
#ifndef ZP_FUZZ_H
#define ZP_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_ASSERT(c, ...) do { if (!(c)) { fprintf(stderr, "fuzz property broken at %s:%d: ", __FILE__, __LINE__); \
                                  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); abort(); } } while (0)
#endif
