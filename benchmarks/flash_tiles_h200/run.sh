#!/bin/bash
# flash-attention tile probe; writes $OUT/result.txt (+ raw ncu files)
OUT=${OUT:-/tmp/devcheck_out}; mkdir -p "$OUT"; R=$OUT/result.txt; : > "$R"
export PYTHONUNBUFFERED=1
command -v ncu >/dev/null || export PATH=$PATH:$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | tail -1)
D=$(dirname "$0")  # this folder (run from the repo root: bash benchmarks/flash_tiles_h200/run.sh)
log() { echo "$@" | tee -a "$R"; }
log "== host"; { date -u; uname -r; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; ncu --version | tail -1; } 2>&1 | tee -a "$R"
log "== ncu metric query (tensor lines)"
timeout 40 ncu --query-metrics > "$OUT/ncu_metrics.txt" 2>&1 || timeout 40 ncu --query-metrics --chip gh100 > "$OUT/ncu_metrics.txt" 2>&1
grep -i tensor "$OUT/ncu_metrics.txt" | head -60 | tee -a "$R"
M=$(python3 $D/pick.py pick "$OUT/ncu_metrics.txt" 2>>"$R")
[ -z "$M" ] && M=sm__inst_executed_pipe_tensor_op_hmma.sum,gpu__time_duration.sum
log "== ncu run 1, metrics: $M"
log "command: ncu --clock-control none --csv --print-units base --print-kernel-base demangled -k regex:flash --metrics $M python3 $D/attn.py prof"
timeout 120 ncu --clock-control none --csv --print-units base --print-kernel-base demangled -k regex:flash --metrics "$M" python3 $D/attn.py prof > "$OUT/ncu1.csv" 2> "$OUT/ncu1.err"; log "rc=$?"
grep -v '^"' "$OUT/ncu1.csv" | head -30 | tee -a "$R"; tail -20 "$OUT/ncu1.err" | tee -a "$R"
if grep -q '^"' "$OUT/ncu1.csv"; then
  python3 $D/pick.py parse "$OUT/ncu1.csv" 2>&1 | tee -a "$R"
else
  M2=$(python3 $D/pick.py minimal "$OUT/ncu_metrics.txt" 2>>"$R")
  log "== ncu run 2 (fallback), metrics: $M2"
  timeout 70 ncu --clock-control none --csv --print-units base --print-kernel-base demangled -k regex:flash --metrics "$M2" python3 $D/attn.py prof > "$OUT/ncu2.csv" 2> "$OUT/ncu2.err"; log "rc=$?"
  grep -v '^"' "$OUT/ncu2.csv" | head -30 | tee -a "$R"; tail -20 "$OUT/ncu2.err" | tee -a "$R"
  python3 $D/pick.py parse "$OUT/ncu2.csv" 2>&1 | tee -a "$R"
fi
log "== python: versions, backend, timings, kernel grids"
timeout 130 python3 $D/attn.py info 2>&1 | tee -a "$R"
log "== end $(date -u)"
