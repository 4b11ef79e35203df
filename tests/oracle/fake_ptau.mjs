// fake_ptau.mjs CURVE POWER OUT.ptau [--seed STR] [--no-prepare]
//
// INSECURE, TEST-ONLY: writes a snarkjs 0.7.6 powers-of-tau file whose toxic waste is KNOWN,
// so that a key made by `zkpipe testkey --tau/--alpha/--beta --delta 1` can be compared byte
// for byte with the zkey `snarkjs groth16 setup` makes from this file (tests/oracle/test_testkey.sh).
//   CURVE  bn128 | bls12381       POWER  1..16 (phase-2 preparation is O(n log n) in JS)
//   tau, alpha, beta = sha512(SEED + "/" + "tau" | "alpha" | "beta") mod r   (SEED default
//   "zkpipe-insecure-seed"); printed on stdout as three decimal numbers.
//
// How: the phase-1 sections are computed here from the known scalars, laid out as `snarkjs
// powersoftau new` lays them out (affine points in ffjavascript's Montgomery little-endian
// form): 1 header (n8q, q, power, ceremony power), 2 tau^i G1 (i < 2^(P+1)-1), 3 tau^i G2,
// 4 alpha tau^i G1, 5 beta tau^i G1 (i < 2^P each), 6 beta G2, 7 contributions (count 0, as
// after `powersoftau new`: neither `prepare phase2` nor `groth16 setup` reads them). Then the
// pinned snarkjs's own `powersOfTau.preparePhase2` adds the Lagrange sections 12..15, unless
// --no-prepare. snarkjs and ffjavascript come from this folder's node_modules (ensure.sh).
import { createHash } from "node:crypto";
import { renameSync, unlinkSync, existsSync } from "node:fs";
import * as snarkjs from "snarkjs";
import * as binFileUtils from "@iden3/binfileutils";

const usage = "usage: fake_ptau.mjs bn128|bls12381 POWER OUT.ptau [--seed STR] [--no-prepare]";
const die = (m, code = 1) => { console.error(`fake_ptau: ${m}`); process.exit(code); };
const pos = [];
let seed = "zkpipe-insecure-seed", prepare = true;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--seed") {
    if (i + 1 >= argv.length) die("--seed needs a value\n" + usage, 2);
    seed = argv[++i];
  } else if (argv[i] === "--no-prepare") prepare = false;
  else if (argv[i].startsWith("--")) die(`unknown option ${argv[i]}\n${usage}`, 2);
  else pos.push(argv[i]);
}
if (pos.length !== 3) die(usage, 2);
const [curveName, powerText, outPath] = pos;
if (curveName !== "bn128" && curveName !== "bls12381") die(`curve ${JSON.stringify(curveName)} is neither bn128 nor bls12381`, 2);
if (!/^[0-9]+$/.test(powerText) || +powerText < 1 || +powerText > 16) die(`power ${JSON.stringify(powerText)} is not in 1..16`, 2);
const power = +powerText;

const curve = await snarkjs.curves.getCurveFromName(curveName);
const r = curve.r;
const scalar = (tag) => BigInt("0x" + createHash("sha512").update(seed + "/" + tag).digest("hex")) % r;
const tau = scalar("tau"), alpha = scalar("alpha"), beta = scalar("beta");
if (tau === 0n) die(`seed ${JSON.stringify(seed)} gives tau = 0; choose another`);

// n points first * inc^i * G (i = 0..n-1), affine LEM, in chunks (batchApplyKey's t, inc: Fr)
async function powers(G, first, inc, n) {
  const sG = G.F.n8 * 2, chunk = 1 << 14, out = new Uint8Array(n * sG);
  const incFr = curve.Fr.e(inc);
  let t = curve.Fr.e(first);
  for (let i = 0; i < n; i += chunk) {
    const k = Math.min(chunk, n - i);
    const gens = new Uint8Array(k * sG);
    for (let j = 0; j < k; j++) gens.set(G.oneAffine, j * sG);
    out.set(await G.batchApplyKey(gens, t, incFr), i * sG);
    t = curve.Fr.mul(t, curve.Fr.exp(incFr, k));
  }
  return out;
}

const n = 2 ** power;
const phase1 = prepare ? `${outPath}.phase1.${process.pid}` : `${outPath}.${process.pid}`;
async function writePhase1(path) {
  const fd = await binFileUtils.createBinFile(path, "ptau", 1, 7);
  await binFileUtils.startWriteSection(fd, 1);
  const n8q = curve.F1.n8, qBytes = new Uint8Array(n8q);
  for (let i = 0, q = curve.q; i < n8q; i++, q >>= 8n) qBytes[i] = Number(q & 0xffn);
  await fd.writeULE32(n8q);
  await fd.write(qBytes);
  await fd.writeULE32(power);
  await fd.writeULE32(power);
  await binFileUtils.endWriteSection(fd);
  const sections = [
    [2, curve.G1, 1n, tau, 2 * n - 1],
    [3, curve.G2, 1n, tau, n],
    [4, curve.G1, alpha, tau, n],
    [5, curve.G1, beta, tau, n],
    [6, curve.G2, beta, 1n, 1],
  ];
  for (const [id, G, first, inc, count] of sections) {
    await binFileUtils.startWriteSection(fd, id);
    await fd.write(await powers(G, first, inc, count));
    await binFileUtils.endWriteSection(fd);
  }
  await binFileUtils.startWriteSection(fd, 7);
  await fd.writeULE32(0);
  await binFileUtils.endWriteSection(fd);
  await fd.close();
}

try {
  await writePhase1(phase1);
  if (prepare) {
    const tmp = `${outPath}.${process.pid}`;
    await snarkjs.powersOfTau.preparePhase2(phase1, tmp);
    unlinkSync(phase1);
    renameSync(tmp, outPath);
  } else {
    renameSync(phase1, outPath);
  }
} catch (e) {
  for (const p of [phase1, `${outPath}.${process.pid}`]) if (existsSync(p)) unlinkSync(p);
  die(`writing ${outPath}: ${e.message}`);
}
console.log(`${tau} ${alpha} ${beta}`);
await curve.terminate();
