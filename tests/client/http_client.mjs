// http_client.mjs BASE TOKEN KEY_ID WTNS VK ORACLE_ROOT - a JavaScript client of the HTTP API
// using fetch (node 18+), as one on another host would be: the key by the id the server holds
// ({"key_id": KEY_ID}), the witness inline (wtns_base64); polls GET /v1/jobs/ID until it
// ends, and checks the proof with snarkjs (the pinned one in tests/oracle). Exit 0 iff verified.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
const [base, token, keyId, wtns, vkPath, oracle] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${token}` };
const body = { zkey: { key_id: keyId }, witnesses: [{ wtns_base64: readFileSync(wtns).toString("base64") }], priority: "high",
               request_id: `node-${process.pid}` };
let r = await fetch(`${base}/v1/jobs`, { method: "POST", headers: { ...auth, "Content-Type": "application/json" },
                                          body: JSON.stringify(body) });
if (r.status !== 201) { console.error("POST", r.status, await r.text()); process.exit(1); }
const { id } = await r.json();
let job;
for (let i = 0; i < 600; i++) {
  r = await fetch(`${base}/v1/jobs/${id}`, { headers: auth });
  job = await r.json();
  if (job.state !== "running") break;
  await new Promise((res) => setTimeout(res, 200));
}
if (job.state !== "done") { console.error("job", JSON.stringify(job)); process.exit(1); }
const snarkjs = createRequire(join(oracle, "package.json"))("snarkjs");
const ok = await snarkjs.groth16.verify(JSON.parse(readFileSync(vkPath, "utf8")), job.partitions[0].public, job.partitions[0].proof);
console.log(`node fetch client: job ${id} ${job.state}, snarkjs ${ok ? "accepts" : "REJECTS"} the proof`);
process.exit(ok ? 0 : 1);
