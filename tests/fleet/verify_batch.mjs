// verify_batch.mjs ORACLE_ROOT LIST - verify many Groth16 proofs with snarkjs in one node process
// (curve set-up once per curve instead of once per proof). LIST: lines "VK PUBLIC PROOF".
// Prints "verified N" and exits 0 iff every proof verifies; names each one that does not.
import { readFileSync } from "fs";
import { createRequire } from "module";
const [root, list] = process.argv.slice(2);
const require = createRequire(root + "/package.json");
const snarkjs = require("snarkjs");
const lines = readFileSync(list, "utf8").split("\n").filter((l) => l.trim());
const vks = new Map();
let ok = 0, bad = 0;
for (const l of lines) {
  const [vkp, pubp, proofp] = l.trim().split(/\s+/);
  if (!vks.has(vkp)) vks.set(vkp, JSON.parse(readFileSync(vkp, "utf8")));
  let good = false;
  try {
    good = await snarkjs.groth16.verify(vks.get(vkp), JSON.parse(readFileSync(pubp, "utf8")),
                                        JSON.parse(readFileSync(proofp, "utf8")), { log() {}, info() {}, debug() {}, error() {} });
  } catch (e) {
    console.error(`error verifying ${proofp}: ${e.message}`);
  }
  if (good) ok++; else { bad++; console.error(`REJECTED: ${proofp}`); }
}
console.log(`verified ${ok} of ${lines.length}`);
process.exit(bad === 0 && ok === lines.length && ok > 0 ? 0 : 1);
