#!/bin/bash
# bench/gpu/device_run.sh — the GPU machine's checks (../shared/GPU.md items 1-3) in one call.
#
# Runs on a machine with an NVIDIA GPU whose python3 holds a CUDA torch 2.x and which can fetch nothing:
# the build dependencies LibTorch does not bring (Debian bookworm's protobuf, ONNX, nlohmann-json, CLI11,
# toml++) travel unpacked under DEPS (bench/gpu/pack_deps.sh makes it). Writes into OUT (default ./gpu-out):
#   log.txt        this script's log: versions, per-step results, the latency table's raw JSON lines
#   build.log      cmake + ninja of flopwise, libflopwise_torch.so and flopwise-runtime against the LibTorch of
#                  python3's torch (-DFLOPWISE_TORCH_PYTHON; the 2026-11-26 runs named its prefix by hand)
#   fixtures.tgz   models/gpu_fixtures.py's output (traces, .pt2, dynamo ONNX, eager counts, manifest)
#   zoo211.tgz     models/torch_zoo.py's archives saved by this torch, the small ones, with expect.json
#   runs.tgz       every `flopwise run --device cuda` report (JSON) and the Python baseline lines
# Every step has a deadline (DEADLINE seconds after the start, default 430); what is done is packed.
# SKIP_FIXTURES=1 and SKIP_ZOO=1 leave out item 3's fixtures and item 2's zoo (the latency table alone).
set -u
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
T0=$(date +%s)
DEADLINE=${DEADLINE:-430}
left() { echo $((DEADLINE - ($(date +%s) - T0))); }
log() { echo "[$(($(date +%s) - T0))s] $*" | tee -a "$OUT/log.txt"; }
ROOT=$PWD
DEPS=$ROOT/.gpu/deps/usr
W=/tmp/fw
mkdir -p $W/runs
export PYTHONUNBUFFERED=1

log "start; $(nproc) cpus"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader >>"$OUT/log.txt" 2>&1
python3 -c 'import torch,sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), torch.cuda.get_device_name(0), "python", sys.version.split()[0])' >>"$OUT/log.txt" 2>&1
(g++ --version | head -1; cmake --version | head -1; ninja --version; nvcc --version | tail -1) >>"$OUT/log.txt" 2>&1

# 1. The build (background): only what the runs need.
export LD_LIBRARY_PATH=$DEPS/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
(
  cmake -S "$ROOT" -B $W/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPWISE_BUILD_TESTS=OFF \
    -DFLOPWISE_BUILD_BENCH=OFF -DCMAKE_PREFIX_PATH="$DEPS" -DFLOPWISE_TORCH_PYTHON=python3 \
    -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DProtobuf_PROTOC_EXECUTABLE=$DEPS/bin/protoc &&
  ninja -C $W/build -j 12 flopwise flopwise_torch flopwise_runtime
) >"$OUT/build.log" 2>&1 &
BUILD=$!

# 2. Fixtures (GPU, background; done before the timed runs start) and this torch's TorchScript files (CPU).
( [ -n "${SKIP_FIXTURES:-}" ] && exit 0
  OMP_NUM_THREADS=2 timeout 230 python3 models/gpu_fixtures.py --out $W/fixtures ${SKIP_TRACES:+--only expect pt2 onnx} \
    --onnx-models resnet18 bert gpt2 mobilenet_v2 efficientnet_b0 convnext_tiny vit swin maxvit unet lstm_lm \
      transformer mha lstm gru densenet121 regnet_y_400mf shufflenet_v2_x0_5 fcn_resnet50 mvit_v2_s \
    --deadline 200
  tar -C $W -czf "$OUT/fixtures.tgz" fixtures
) >$W/fixtures.log 2>&1 &
FIX=$!
(
  OMP_NUM_THREADS=2 timeout 150 python3 bench/gpu/big_models.py $W/big
  OMP_NUM_THREADS=2 timeout 120 python3 models/generate.py --torchscript --out $W/pt211
) >$W/models.log 2>&1 &
MODELS=$!
if [ -z "${SKIP_ZOO:-}" ]; then
  OMP_NUM_THREADS=2 nice -n 19 timeout 300 python3 models/torch_zoo.py --out $W/zoo211 >$W/zoo.log 2>&1 &
  ZOO=$!
else
  ZOO=
fi

wait $BUILD
log "build rc=$? ($(ls $W/build/flopwise $W/build/flopwise-runtime $W/build/libflopwise_torch.so 2>/dev/null | wc -l)/3 binaries)"
tail -30 "$OUT/build.log" >>"$OUT/log.txt"
FW=$W/build/flopwise
wait $MODELS
log "models rc=$?: big $(ls $W/big 2>/dev/null | tr '\n' ' '); pt211 $(ls $W/pt211 2>/dev/null | wc -l) files"
grep -v "warnings.warn\|Warning" $W/models.log | tail -15 >>"$OUT/log.txt"
wait $FIX
log "fixtures rc=$?"
grep '^{"kind"' $W/fixtures.log >>"$OUT/log.txt"
grep -v '^{"kind"' $W/fixtures.log | grep -v "warnings.warn\|Warning" | tail -20 >>"$OUT/log.txt"

if [ -x "$FW" ]; then
  # 3. Item 1: ResNet-50 and BERT-base at batch 1, 8, 64; the Python baseline before and after.
  run_big() {  # NAME BATCH INPUTS...
    local name=$1 b=$2
    shift 2
    timeout 90 $FW run $W/big/$name.trace.pt --device cuda --hardware h200 --warmup 10 --iters 50 \
      --profile-iters 5 "$@" --format json -o $W/runs/$name.b$b.json 2>>$W/runs/$name.b$b.err
    log "flopwise run $name b$b rc=$? $(python3 -c "import json,sys; d=json.load(open('$W/runs/$name.b$b.json')); s=d['summary']; print(json.dumps({k: s.get(k) for k in ('fwd_latency_ms','fwd_flops_per_s','profiling_overhead','coverage')}), json.dumps({k: d['runtime'].get(k) for k in ('op_clock', 'tf32')}), 'below_bound:', [r['name'] for r in d['scopes'] if r.get('below_bound')][:8])" 2>&1 | tail -1)"
  }
  py_big() {
    timeout 60 python3 bench/gpu/event_loop.py $W/big/resnet50.trace.pt --batches 1,8,64 --input x:Bx3x224x224 \
      >>$W/runs/python_baseline.jsonl 2>>$W/runs/python.err
    timeout 60 python3 bench/gpu/event_loop.py $W/big/bert_base.trace.pt --batches 1,8,64 \
      --input input_ids:Bx128:int64 --input token_type_ids:Bx128:int64 --int-high 30522,2 \
      >>$W/runs/python_baseline.jsonl 2>>$W/runs/python.err
  }
  if [ -f $W/big/bert_base.trace.pt ]; then
    py_big
    for b in 1 8 64; do
      run_big resnet50 $b --input x:${b}x3x224x224
      run_big bert_base $b --input input_ids:${b}x128 --input token_type_ids:${b}x128
    done
    py_big
    cat $W/runs/python_baseline.jsonl | python3 -c "import sys,json; [print(json.dumps({k: v for k, v in json.loads(l).items() if k != 'fwd_ms'})) for l in sys.stdin]" >>"$OUT/log.txt"
    tail -3 $W/runs/python.err >>"$OUT/log.txt" 2>/dev/null
  fi
  # 4. Item 1: every bundled .pt (this torch's, and Debian torch 1.13's carried in .gpu/pt113) with --verify.
  for f in $W/pt211/*.pt .gpu/pt113/*.pt; do
    [ -f "$f" ] || continue
    [ $(left) -gt 60 ] || { log "deadline: skipped the rest of the bundled runs"; break; }
    tag=$(basename $(dirname $f)).$(basename $f .pt)
    case $(basename $f) in  # a scripted module records no input shapes: models/generate.py's examples
      bert.script.pt) pins="--input input_ids:1x64:int64 --input token_type_ids:1x64:int64" ;;
      resnet18.script.pt | mobilenet_v2.script.pt) pins="--input 1x3x224x224" ;;
      data_if.script.pt | raises.script.pt) pins="--input 2x4" ;;
      *) pins="" ;;
    esac
    timeout 60 $FW run $f $pins --device cuda --verify --format json -o $W/runs/$tag.json 2>$W/runs/$tag.err
    rc=$?
    log "verify $tag rc=$rc $(head -c 300 $W/runs/$tag.err | head -2 | tr '\n' ' ')"
  done
  # 5. Item 2: this torch's zoo, analysed by this build, against the eager counts.
  [ -n "$ZOO" ] && wait $ZOO
  log "zoo211 rc=$?: $(ls $W/zoo211/*.pt 2>/dev/null | wc -l) archives"
  grep -v "warnings.warn\|Warning" $W/zoo.log | tail -15 >>"$OUT/log.txt"
  if [ -d $W/zoo211 ] && [ $(left) -gt 40 ]; then
    timeout $(( $(left) - 25 )) python3 bench/gpu/zoo_check.py $FW $W/zoo211 --jobs 12 >$W/runs/zoo_check.jsonl 2>&1
    log "zoo check rc=$?"
    tail -1 $W/runs/zoo_check.jsonl >>"$OUT/log.txt"
  fi
fi

cp $W/models.log $W/zoo.log $W/fixtures.log $W/runs/ 2>/dev/null
tar -C $W -czf "$OUT/runs.tgz" runs
if [ -d $W/zoo211 ]; then
  (cd $W/zoo211 && find . -maxdepth 1 \( -name '*.json' -o \( -name '*.pt' -size -400k \) \) -print0 |
    tar --null -T - -czf "$OUT/zoo211.tgz")
fi
ls -la "$OUT" >>"$OUT/log.txt"
log "done"
