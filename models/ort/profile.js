// models/ort/profile.js MODEL.onnx LEVEL OUT.json RUNS NAME=d1xd2:dtype ...
// Runs MODEL through ONNX Runtime (onnxruntime-node, CPU) with profiling on at graph optimisation LEVEL
// ("disabled" or "all"), RUNS times on inputs of the given shapes (zeros; int64 ids are 0), and moves the
// profile ORT writes to OUT.json. Called by models/ort/profiles.sh.
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

async function main() {
  const [model, level, out, runs, ...specs] = process.argv.slice(2);
  const prefix = path.join(path.dirname(out), '.ort_profile_' + process.pid);
  const session = await ort.InferenceSession.create(model, {
    enableProfiling: true,
    profileFilePrefix: prefix,
    graphOptimizationLevel: level,
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
  });
  const feeds = {};
  for (const spec of specs) {
    const [name, shape, dtype] = spec.split(/[=:]/);
    const dims = shape.split('x').map(Number);
    const n = dims.reduce((a, b) => a * b, 1);
    feeds[name] = dtype === 'int64' ? new ort.Tensor('int64', new BigInt64Array(n), dims)
                                    : new ort.Tensor('float32', new Float32Array(n), dims);
  }
  for (let i = 0; i < Number(runs); ++i) await session.run(feeds);
  const written = session.endProfiling();
  await session.release();
  const file = fs.existsSync(written) ? written : fs.readdirSync(path.dirname(out))
      .map(f => path.join(path.dirname(out), f)).find(f => path.basename(f).startsWith(path.basename(prefix)));
  fs.renameSync(file, out);
  console.log(out);
}
main().catch(e => { console.error('profile.js: ' + e.message); process.exit(1); });
