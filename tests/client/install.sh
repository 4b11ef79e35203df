#!/usr/bin/env bash
# install.sh ZKPIPE SOURCE_ROOT - `meson install --destdir` of this build (issue 14 item 2):
#  - the tree: binaries, libzkpipe-client (shared + static) with its header and pkg-config file,
#    systemd units with the install paths substituted (no @...@ left, ExecStart= names the
#    installed binary), the sysusers file, the example configuration, a man page per command;
#  - pkg-config resolves the library; the example program (client/example.c, installed under
#    share/doc) builds against the installed tree, dynamically and statically, and proves a
#    witness (by path and inline) on a group started from the INSTALLED `zkpipe up`; the proofs
#    verify (installed `zkpipe verify`, and snarkjs when present); Python ctypes drives the
#    installed shared library the same way (the FFI path of a Go/Rust/Python service);
#  - `zkpipe help await` carries the exit codes and the man page holds the same text.
. "$(dirname "$0")/../ipc/lib.sh"
BUILD=$(cd "$(dirname "$1")/.." && pwd)
command -v cc >/dev/null && command -v pkg-config >/dev/null || ipc_skip "cc and pkg-config are needed"
D=$(mktemp -d /tmp/zkpipe-destdir.XXXXXX)
trap 'rm -rf "$D"' EXIT
meson install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >"$D.log" 2>&1 || { cat "$D.log" >&2; rm -f "$D.log"; ipc_fail "meson install"; }
rm -f "$D.log"
PREFIX=$(meson introspect "$BUILD" --buildoptions | jq -r '.[] | select(.name == "prefix") | .value')
P=$D$PREFIX
for f in bin/zkpipe bin/zkpipe-broker bin/zkpipe-synth bin/zkpipe-gpu-worker bin/zkpipe-finalizer \
         include/zkpipe-client.h lib/systemd/system/zkpipe-broker.service lib/systemd/system/zkpipe-gpu@.service \
         lib/systemd/system/zkpipe.target lib/sysusers.d/zkpipe.conf share/man/man1/zkpipe-await.1 \
         share/man/man1/zkpipe-up.1 share/doc/zkpipe/examples/example.c; do
  [ -s "$P/$f" ] || ipc_fail "install tree lacks $f"
done
[ -s "$D$PREFIX/etc/zkpipe/zkpipe.conf.example" ] || [ -s "$D/etc/zkpipe/zkpipe.conf.example" ] || ipc_fail "no example config"
SO=$(find "$P" -name 'libzkpipe-client.so.0*' -type f | head -1); [ -n "$SO" ] || ipc_fail "no shared library"
A=$(find "$P" -name libzkpipe-client.a | head -1); [ -n "$A" ] || ipc_fail "no static library"
PC=$(find "$P" -name zkpipe-client.pc | head -1); [ -n "$PC" ] || ipc_fail "no pkg-config file"
nm -D --defined-only "$SO" | awk '{print $3}' | grep -v '^zp_client_' | grep -q . &&
  ipc_fail "the shared library exports more than zp_client_*: $(nm -D --defined-only "$SO" | awk '{print $3}' | grep -v '^zp_client_' | head -3)"
grep -rq '@bindir@\|@sysconfdir@' "$P/lib/systemd/system" && ipc_fail "unsubstituted paths in the units"
grep -q "^ExecStart=$PREFIX/bin/zkpipe-broker " "$P/lib/systemd/system/zkpipe-broker.service" || ipc_fail "broker unit ExecStart"
for c in prove verify up submit await status cancel trace metrics; do
  [ -s "$P/share/man/man1/zkpipe-$c.1" ] || ipc_fail "no man page for $c"
done
grep -q "broker unreachable" "$P/share/man/man1/zkpipe-await.1" || ipc_fail "await man page lacks the exit codes"
"$P/bin/zkpipe" help await | grep -q "5  broker unreachable" || ipc_fail "zkpipe help await lacks the exit codes"

export PKG_CONFIG_PATH=$(dirname "$PC") PKG_CONFIG_SYSROOT_DIR=$D
pkg-config --exists zkpipe-client || ipc_fail "pkg-config does not resolve zkpipe-client"
[ "$(pkg-config --modversion zkpipe-client)" = "$(meson introspect "$BUILD" --projectinfo | jq -r .version)" ] || ipc_fail "pc version"
# a sanitized build's library needs the same runtime in the program
SAN=$(meson introspect "$BUILD" --buildoptions | jq -r '.[] | select(.name == "b_sanitize") | .value')
SANF=(); [ -n "$SAN" ] && [ "$SAN" != none ] && SANF=(-fsanitize="$SAN")
cc "${SANF[@]}" -o "$D/example" "$P/share/doc/zkpipe/examples/example.c" $(pkg-config --cflags --libs zkpipe-client) || ipc_fail "example (shared) does not build"
LIBDIR=$(dirname "$A")
cc "${SANF[@]}" -o "$D/example-static" "$P/share/doc/zkpipe/examples/example.c" $(pkg-config --cflags zkpipe-client) \
  "$A" $(pkg-config --static --libs-only-l zkpipe-client | sed 's/-lzkpipe-client//') -lpthread ||
  ipc_fail "example (static) does not build"
ldd "$D/example-static" | grep -q libzkpipe-client && ipc_fail "the static example links the shared library"

# a group from the installed binaries, the example against it
ipc_init cinst "$P/bin/zkpipe" "$2" --slots 2 --max-domain 1024
F=$FIX/bn128_chain
LD_LIBRARY_PATH=$LIBDIR "$D/example" $F/circuit.zkey $F/witness-0.wtns >"$IPC_DIR/out/proof-0.json" || ipc_fail "example (shared, path)"
"$D/example-static" $F/circuit.zkey $F/witness-1.wtns --inline >"$IPC_DIR/out/proof-1.json" || ipc_fail "example (static, inline)"
# the public signals: the same statement for both (chain fixture, one input), from an await
J=$("$P/bin/zkpipe" submit --zkey $F/circuit.zkey $F/witness-0.wtns $F/witness-1.wtns) || ipc_fail "installed submit"
"$P/bin/zkpipe" await "$J" --timeout 120 --out "$IPC_DIR/ref" --quiet >/dev/null || ipc_fail "installed await"
cp "$IPC_DIR/ref/public-0.json" "$IPC_DIR/out/public-0.json"; cp "$IPC_DIR/ref/public-1.json" "$IPC_DIR/out/public-1.json"
ZKPIPE=$P/bin/zkpipe ipc_verify_all "$IPC_DIR/out" $F/verification_key.json 2
ipc_oracle $F/verification_key.json "$IPC_DIR/out/public-1.json" "$IPC_DIR/out/proof-1.json"
# the same library through FFI: Python ctypes on the installed shared object
[ ${#SANF[@]} -eq 0 ] && python3 - "$SO" $F/circuit.zkey $F/witness-2.wtns <<'PY' || [ ${#SANF[@]} -gt 0 ] || ipc_fail "ctypes client"
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
P, S, U64 = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64
for name, res, args in [("zp_client_new", P, [S]), ("zp_client_job_new", P, [S]), ("zp_client_job_add_wtns", ctypes.c_int, [P, S]),
                        ("zp_client_submit", ctypes.c_int, [P, P, ctypes.POINTER(U64), P]),
                        ("zp_client_await", ctypes.c_int, [P, U64, ctypes.c_int64, ctypes.POINTER(P)]),
                        ("zp_client_result_proof", S, [P, ctypes.c_uint32]), ("zp_client_errmsg", S, [P]),
                        ("zp_client_result_free", None, [ctypes.POINTER(P)]), ("zp_client_destroy", None, [ctypes.POINTER(P)])]:
    f = getattr(lib, name); f.restype = res; f.argtypes = args
c = P(lib.zp_client_new(None)); j = lib.zp_client_job_new(sys.argv[2].encode())
assert lib.zp_client_job_add_wtns(j, sys.argv[3].encode()) == 0
job = U64(0)
rc = lib.zp_client_submit(c, j, ctypes.byref(job), None); assert rc == 0, (rc, lib.zp_client_errmsg(c))
r = P()
rc = lib.zp_client_await(c, job, 120000, ctypes.byref(r)); assert rc == 0, (rc, lib.zp_client_errmsg(c))
proof = json.loads(lib.zp_client_result_proof(r, 0)); assert proof["protocol"] == "groth16", proof
lib.zp_client_result_free(ctypes.byref(r)); lib.zp_client_destroy(ctypes.byref(c))
print("ctypes: job", job.value, "proved", file=sys.stderr)
PY
ipc_log "install tree ok: $(find "$P" -type f | wc -l) files; example linked shared and static, proofs verify"
