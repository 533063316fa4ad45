#!/usr/bin/env bash
# Issue 30.6 and 30.2/30.4 on the device machine (one GPU, 16 cores), in one call, up to three lanes at once on
# disjoint cores: a: nanoGPT (karpathy's model.py in $NANOGPT_DIR) on CPU; b: Hugging Face GPT-2 on CPU; c: a CUDA
# nanoGPT step recorded twice with --caches on into a fresh cache directory (Triton compile times, then the caches'
# hits) and the GPU compile-time tests (GPU_CHECK=1), then nanoGPT on CUDA.  Each lane alternates its modes
# (MODES: on, off, plain), so what the other lanes cost the box falls on every mode alike.
#   OUT=/tmp/o ROUNDS=5 NANOGPT_DIR=/work/trial [LANES="a b c"] [MODES=on,off,plain] [GPU_CHECK=1]
#   [MODES_C=on,off] [COMPILE_THREADS=1] bash benchmarks/compile_time_device.sh
set -u
OUT=${OUT:-/tmp/ct30-out}; ROUNDS=${ROUNDS:-5}; NANOGPT_DIR=${NANOGPT_DIR:-/work/trial}
CPUS_A=${CPUS_A:-0-5}; CPUS_B=${CPUS_B:-6-11}; CPUS_C=${CPUS_C:-12-15}
LANES=${LANES:-a b c}; MODES=${MODES:-on,off,plain}; GPU_CHECK=${GPU_CHECK:-1}
# Inductor's compile workers: by default one per core of the machine (16 here), whatever the lane's cores
[ -n "${COMPILE_THREADS:-}" ] && export TORCHINDUCTOR_COMPILE_THREADS=$COMPILE_THREADS
pin() { if command -v taskset >/dev/null; then taskset -c "$@"; else shift; "$@"; fi; }
mkdir -p "$OUT" /tmp/la /tmp/lb /tmp/lc
B=benchmarks/compile_time_e2e.py
echo "cores $(nproc); $(python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else "")')"
python3 -c 'import transformers, triton; print("transformers", transformers.__version__, "triton", triton.__version__)' 2>&1 | tail -1
lscpu 2>/dev/null | grep -m1 "Model name"; echo "lanes: $LANES; modes: $MODES; compile threads: ${TORCHINDUCTOR_COMPILE_THREADS:-default}"
pids=()
if [[ $LANES == *a* ]]; then
  python3 $B --model nanogpt --device cpu --rounds "$ROUNDS" --cpus "$CPUS_A" --modes "$MODES" --nanogpt-dir "$NANOGPT_DIR" \
    --cwd /tmp/la --json "$OUT/nanogpt_cpu.json" > "$OUT/lane_a.log" 2>&1 & pids+=($!)
fi
if [[ $LANES == *b* ]]; then
  python3 $B --model hf_gpt2 --device cpu --rounds "$ROUNDS" --cpus "$CPUS_B" --modes "$MODES" --nanogpt-dir "$NANOGPT_DIR" \
    --cwd /tmp/lb --json "$OUT/hf_cpu.json" > "$OUT/lane_b.log" 2>&1 & pids+=($!)
fi
if [[ $LANES == *c* ]]; then
(
  if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    if [ "$GPU_CHECK" = 1 ]; then
      export TORCHINDUCTOR_CACHE_DIR=/tmp/lc/fresh_cache
      for run in first again; do
        pin "$CPUS_C" python3 -m inductor_step --headless --caches on --record /tmp/lc/gpu_$run.jsonl $B --child \
          --model nanogpt --device cuda --nanogpt-dir "$NANOGPT_DIR" 2>&1 | grep -E "CTIME_E2E|compile time:|rror" | cut -c1-400
      done
      python3 $B --show /tmp/lc/gpu_first.jsonl /tmp/lc/gpu_again.jsonl
      unset TORCHINDUCTOR_CACHE_DIR
      pin "$CPUS_C" python3 -m pytest -m gpu tests/gpu/test_compile_time_gpu.py -q -rA -s -p no:cacheprovider 2>&1 | tail -40
    fi
    python3 $B --model nanogpt --device cuda --rounds "$ROUNDS" --cpus "$CPUS_C" --modes "${MODES_C:-$MODES}" --nanogpt-dir "$NANOGPT_DIR" \
      --cwd /tmp/lc --json "$OUT/nanogpt_cuda.json"
  else
    echo "no CUDA: lane c skipped"
  fi
) > "$OUT/lane_c.log" 2>&1 & pids+=($!)
fi
wait "${pids[@]}"
for f in lane_a lane_b lane_c; do [ -f "$OUT/$f.log" ] && { echo "===== $f"; grep -v "^\s*$" "$OUT/$f.log" | tail -30; }; done
