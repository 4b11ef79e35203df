// verify.mjs VK.json PUBLIC.json PROOF.json - the snarkjs oracle for one proof (run by verify.sh).
//
// Exit 0 iff snarkjs 0.7.6 (tests/oracle/node_modules, pinned by package-lock.json) accepts
// the proof with groth16.verify AND, unless ZP_ORACLE_LAYOUT=0, both files are laid out the
// way snarkjs itself writes them. Exit 1 with one line on stderr saying what is wrong; 2 on
// usage errors.
//
// The layout check exists because snarkjs's verifier is lenient: it takes points without the
// third coordinate, projective points, hex strings, coordinates >= q, numbers as public
// signals and any "protocol"/"curve" text. A drop-in prover must write what snarkjs writes:
//   proof  {"pi_a":[x,y,"1"],"pi_b":[[x0,x1],[y0,y1],["1","0"]],"pi_c":[x,y,"1"],
//           "protocol":"groth16","curve":<vk.curve>}  in this key order
//   public [s_0 .. s_{nPublic-1}]
// every number a decimal string without sign or leading zeros, below q (coordinates) or r
// (public signals). ZP_ORACLE_BYTES=1 also demands the exact bytes of
// JSON.stringify(value, null, 1) with no trailing newline (what `snarkjs groth16 prove` writes).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
if (args.length !== 3) {
  console.error("usage: verify.mjs VK.json PUBLIC.json PROOF.json");
  process.exit(2);
}
const [vkPath, pubPath, proofPath] = args;
const bad = (what) => { console.error(`verify: ${what}`); process.exit(1); };

const MOD = {
  bn128: {
    q: 21888242871839275222246405745257275088696311157297823662689037894645226208583n,
    r: 21888242871839275222246405745257275088548364400416034343698204186575808495617n,
  },
  bls12381: {
    q: BigInt("0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"),
    r: BigInt("0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"),
  },
};

function load(path, what) {
  let text;
  try { text = readFileSync(path, "utf8"); } catch (e) { bad(`${what} ${path}: ${e.code || e.message}`); }
  try { return { text, value: JSON.parse(text) }; } catch (e) { bad(`${what} ${path}: not JSON (${e.message})`); }
}

const vk = load(vkPath, "verification key").value;
const pub = load(pubPath, "public signals");
const proof = load(proofPath, "proof");
const mod = MOD[vk.curve];
if (!mod) bad(`verification key curve ${JSON.stringify(vk.curve)} is neither bn128 nor bls12381`);

function decimal(v, limit, where) {
  if (typeof v !== "string" || !/^(0|[1-9][0-9]*)$/.test(v)) bad(`${where}: ${JSON.stringify(v)} is not a canonical decimal string`);
  if (BigInt(v) >= limit) bad(`${where}: ${v} is not reduced below the modulus`);
}

function checkLayout() {
  const p = proof.value;
  if (p === null || typeof p !== "object" || Array.isArray(p)) bad("proof is not a JSON object");
  const order = Object.keys(p).join(",");
  if (order !== "pi_a,pi_b,pi_c,protocol,curve") bad(`proof keys are [${order}], snarkjs writes pi_a,pi_b,pi_c,protocol,curve`);
  if (p.protocol !== "groth16") bad(`proof.protocol is ${JSON.stringify(p.protocol)}, not "groth16"`);
  if (p.curve !== vk.curve) bad(`proof.curve ${JSON.stringify(p.curve)} differs from the key's ${vk.curve}`);
  for (const k of ["pi_a", "pi_c"]) {
    const pt = p[k];
    if (!Array.isArray(pt) || pt.length !== 3) bad(`${k} must be [x, y, "1"]`);
    decimal(pt[0], mod.q, `${k}[0]`);
    decimal(pt[1], mod.q, `${k}[1]`);
    if (pt[2] !== "1") bad(`${k}[2] is ${JSON.stringify(pt[2])}, an affine point has "1"`);
  }
  const b = p.pi_b;
  if (!Array.isArray(b) || b.length !== 3 || !b.every((c) => Array.isArray(c) && c.length === 2)) bad("pi_b must be three pairs");
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) decimal(b[i][j], mod.q, `pi_b[${i}][${j}]`);
  if (b[2][0] !== "1" || b[2][1] !== "0") bad(`pi_b[2] is ${JSON.stringify(b[2])}, an affine point has ["1","0"]`);
  const s = pub.value;
  if (!Array.isArray(s)) bad("public signals are not a JSON array");
  if (s.length !== vk.nPublic) bad(`${s.length} public signals, the key has nPublic = ${vk.nPublic}`);
  s.forEach((v, i) => decimal(v, mod.r, `public[${i}]`));
  if (process.env.ZP_ORACLE_BYTES === "1") {
    if (proof.text !== JSON.stringify(p, null, 1)) bad("proof bytes are not JSON.stringify(proof, null, 1) (snarkjs's output)");
    if (pub.text !== JSON.stringify(s, null, 1)) bad("public bytes are not JSON.stringify(public, null, 1) (snarkjs's output)");
  }
}

if (process.env.ZP_ORACLE_LAYOUT !== "0") checkLayout();

const modules = join(process.env.ORACLE_ROOT || here, "node_modules");
const require = createRequire(join(modules, "..", "package.json"));
const snarkjs = require("snarkjs");
const version = JSON.parse(readFileSync(join(modules, "snarkjs", "package.json"), "utf8")).version;
if (version !== "0.7.6") bad(`snarkjs ${version} found, the oracle is pinned to 0.7.6`);
let ok = false;
try {
  ok = await snarkjs.groth16.verify(vk, pub.value, proof.value);
} catch (e) {
  bad(`snarkjs groth16.verify threw: ${e.message}`);
}
// snarkjs keeps curve worker threads alive; end explicitly with the verdict.
if (!ok) bad("snarkjs groth16.verify rejects the proof");
process.exit(0);
