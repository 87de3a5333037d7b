#!/usr/bin/env node
// Runs an ONNX model with onnxruntime-node (CPU) on the inputs of an ONNX
// test-data folder and writes its outputs in the same layout.
//
//   node ort_run.js [--prefix DIR] [--repeat N] [--threads T] MODEL.onnx INPUT_DIR [OUTPUT_DIR]
//
// --repeat N runs the session N times and prints the best time
// ("ort: best X ms"); --threads T sets intra-op threads (default: ORT's).
// INPUT_DIR holds input_N.pb (TensorProto; matched to the model's inputs by
// name, or by position when a file has no name). OUTPUT_DIR (default
// INPUT_DIR) gets output_N.pb, one per model output in the model's order,
// with its name and raw_data. onnxruntime-node is loaded from
// DIR/node_modules (default: $FP8_ORT_PREFIX, else <repo>/build/ort; install
// it with scripts/ort/install.sh).
'use strict';
const fs = require('fs');
const path = require('path');

// ONNX TensorProto.DataType -> onnxruntime-node tensor type, typed array.
const DTYPES = {
  1: ['float32', Float32Array], 2: ['uint8', Uint8Array], 3: ['int8', Int8Array],
  4: ['uint16', Uint16Array], 5: ['int16', Int16Array], 6: ['int32', Int32Array],
  7: ['int64', BigInt64Array], 9: ['bool', Uint8Array], 10: ['float16', Uint16Array],
  11: ['float64', Float64Array], 12: ['uint32', Uint32Array], 13: ['uint64', BigUint64Array],
};
const ORT_TO_ONNX = Object.fromEntries(Object.entries(DTYPES).map(([k, [t]]) => [t, Number(k)]));

function fail(msg) {
  process.stderr.write(`ort_run.js: error: ${msg}\n`);
  process.exit(1);
}

// --- minimal protobuf / TensorProto -------------------------------------
function readVarint(buf, pos) {  // -> [BigInt value, next position]
  let result = 0n, shift = 0n;
  for (;;) {
    if (pos >= buf.length) throw new Error('truncated varint');
    const byte = buf[pos++];
    result |= BigInt(byte & 0x7f) << shift;
    if (byte < 0x80) return [result, pos];
    shift += 7n;
  }
}

function packedVarints(chunk) {
  const out = [];
  let pos = 0;
  while (pos < chunk.length) {
    const [v, next] = readVarint(chunk, pos);
    out.push(v);
    pos = next;
  }
  return out;
}

// Reads dims (1), data_type (2), float_data (4), int32_data (5),
// int64_data (7), name (8), raw_data (9), double_data (10).
function readTensor(file) {
  const buf = fs.readFileSync(file);
  const dims = [];
  let dtype = 1, name = '', raw = null;
  const floats = [], ints32 = [], ints64 = [], doubles = [];
  let pos = 0;
  while (pos < buf.length) {
    let key;
    [key, pos] = readVarint(buf, pos);
    const field = Number(key >> 3n), wire = Number(key & 7n);
    if (wire === 0) {
      let v;
      [v, pos] = readVarint(buf, pos);
      if (field === 1) dims.push(Number(v));
      else if (field === 2) dtype = Number(v);
      else if (field === 5) ints32.push(v);
      else if (field === 7) ints64.push(v);
    } else if (wire === 2) {
      let n;
      [n, pos] = readVarint(buf, pos);
      const chunk = buf.subarray(pos, pos + Number(n));
      pos += Number(n);
      if (field === 1) dims.push(...packedVarints(chunk).map(Number));
      else if (field === 8) name = chunk.toString('utf8');
      else if (field === 9) raw = chunk;
      else if (field === 4) for (let i = 0; i + 4 <= chunk.length; i += 4) floats.push(chunk.readFloatLE(i));
      else if (field === 10) for (let i = 0; i + 8 <= chunk.length; i += 8) doubles.push(chunk.readDoubleLE(i));
      else if (field === 5) ints32.push(...packedVarints(chunk));
      else if (field === 7) ints64.push(...packedVarints(chunk));
    } else if (wire === 5) {
      if (field === 4) floats.push(buf.readFloatLE(pos));
      pos += 4;
    } else if (wire === 1) {
      if (field === 10) doubles.push(buf.readDoubleLE(pos));
      pos += 8;
    } else {
      throw new Error(`${file}: unsupported protobuf wire type ${wire}`);
    }
  }
  if (!(dtype in DTYPES)) throw new Error(`${file}: unsupported ONNX data type ${dtype}`);
  const [type, Typed] = DTYPES[dtype];
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (raw !== null) {
    // Copy into an aligned buffer of its own (the host is little-endian).
    const bytes = new Uint8Array(raw.length);
    bytes.set(raw);
    data = new Typed(bytes.buffer, 0, raw.length / Typed.BYTES_PER_ELEMENT);
  } else if (dtype === 1) {
    data = Float32Array.from(floats);
  } else if (dtype === 11) {
    data = Float64Array.from(doubles);
  } else if (dtype === 7) {
    data = BigInt64Array.from(ints64.map((v) => BigInt.asIntN(64, v)));
  } else if (dtype === 13) {
    data = BigUint64Array.from(ints64);
  } else {
    // int32_data holds int32, int16, int8, uint16, uint8, bool and float16 bits.
    data = Typed.from(ints32.map((v) => Number(BigInt.asIntN(32, v))));
  }
  if (data.length !== count) {
    throw new Error(`${file}: ${data.length} values for dims [${dims}]`);
  }
  return { name, type, dims, data };
}

function putVarint(out, value) {
  let v = BigInt.asUintN(64, BigInt(value));
  for (;;) {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    if (v) out.push(byte | 0x80);
    else { out.push(byte); return; }
  }
}

function putBytes(out, field, bytes) {
  putVarint(out, (field << 3) | 2);
  putVarint(out, bytes.length);
  for (const b of bytes) out.push(b);
}

// Writes dims, data_type, name and raw_data, as onnx.numpy_helper does.
function encodeTensor(name, type, dims, data) {
  if (!(type in ORT_TO_ONNX)) throw new Error(`output ${name}: unsupported type ${type}`);
  const head = [];
  for (const d of dims) { putVarint(head, 1 << 3); putVarint(head, d); }
  putVarint(head, 2 << 3);
  putVarint(head, ORT_TO_ONNX[type]);
  if (name) putBytes(head, 8, Buffer.from(name, 'utf8'));
  const raw = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const tail = [];
  putVarint(tail, (9 << 3) | 2);
  putVarint(tail, raw.length);
  return Buffer.concat([Buffer.from(head), Buffer.from(tail), raw]);
}

// --- main ------------------------------------------------------------------
async function main() {
  const args = process.argv.slice(2);
  let prefix = process.env.FP8_ORT_PREFIX || path.resolve(__dirname, '..', '..', 'build', 'ort');
  const rest = [];
  let repeat = 1, threads = 0;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--repeat') repeat = Number(args[++i]);
    else if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--prefix') prefix = args[++i];
    else if (args[i].startsWith('--prefix=')) prefix = args[i].slice('--prefix='.length);
    else if (args[i] === '-h' || args[i] === '--help') {
      process.stdout.write('usage: node ort_run.js [--prefix DIR] MODEL.onnx INPUT_DIR [OUTPUT_DIR]\n');
      return;
    } else rest.push(args[i]);
  }
  if (rest.length < 2 || rest.length > 3) fail('usage: ort_run.js [--prefix DIR] MODEL.onnx INPUT_DIR [OUTPUT_DIR]');
  const [model, inDir, outDir = rest[1]] = rest;

  const modulePath = path.join(path.resolve(prefix), 'node_modules', 'onnxruntime-node');
  if (!fs.existsSync(modulePath)) {
    fail(`onnxruntime-node is not installed in ${path.resolve(prefix)}; run scripts/ort/install.sh ${prefix}`);
  }
  const ort = require(modulePath);

  const inputs = [];
  for (let k = 0; fs.existsSync(path.join(inDir, `input_${k}.pb`)); k++) {
    inputs.push(readTensor(path.join(inDir, `input_${k}.pb`)));
  }
  if (!inputs.length) fail(`${inDir} has no input_N.pb files`);

  if (!(repeat >= 1) || !(threads >= 0)) fail('--repeat takes N >= 1, --threads T >= 0');
  const options = { executionProviders: ['cpu'] };
  if (threads > 0) options.intraOpNumThreads = threads;
  const session = await ort.InferenceSession.create(model, options);
  const feeds = {};
  inputs.forEach((t, k) => {
    const name = t.name || session.inputNames[k];
    if (!session.inputNames.includes(name)) {
      fail(`input_${k}.pb is '${name}', the model's inputs are ${session.inputNames.join(', ')}`);
    }
    feeds[name] = new ort.Tensor(t.type, t.data, t.dims);
  });
  let results, best = Infinity;
  for (let r = 0; r < repeat; r++) {
    const start = process.hrtime.bigint();
    results = await session.run(feeds);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e6);
  }
  if (repeat > 1) process.stdout.write(`ort: best ${best.toFixed(3)} ms of ${repeat}\n`);
  fs.mkdirSync(outDir, { recursive: true });
  session.outputNames.forEach((name, k) => {
    const t = results[name];
    fs.writeFileSync(path.join(outDir, `output_${k}.pb`), encodeTensor(name, t.type, t.dims, t.data));
  });
  await session.release();
}

main().catch((err) => fail(err && err.stack ? err.stack : String(err)));
