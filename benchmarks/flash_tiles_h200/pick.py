"""pick QUERYFILE: print a comma list of available tensor metrics; parse CSVFILE: summarise an ncu --csv result."""

import csv
import re
import sys

WANT = [
    "sm__inst_executed_pipe_tensor_op_hmma",
    "smsp__inst_executed_pipe_tensor_op_hmma",
    "sm__inst_executed_pipe_tensor_op_gmma",
    "sm__inst_executed_pipe_tensor",
    "sm__ops_path_tensor_src_bf16_dst_fp32",
    "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32",
    "sm__ops_path_tensor_op_gmma_src_bf16_dst_fp32",
    "smsp__ops_path_tensor_src_bf16_dst_fp32",
    "sm__pipe_tensor_op_hmma_cycles_active",
    "sm__pipe_tensor_op_gmma_cycles_active",
    "sm__sass_thread_inst_executed_op_hmma_pred_on",
    "smsp__sass_thread_inst_executed_op_hmma_pred_on",
    "gpu__time_duration",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
]
EXTRA = re.compile(r"^(sm|smsp)__(inst_executed_pipe_tensor\w*|ops_path_tensor\w*bf16\w*|sass_\w*hmma\w*)$")


def pick(path, minimal=False):
    names = set()
    for line in open(path, errors="replace"):
        tok = line.split()
        if tok and "__" in tok[0]:
            names.add(re.sub(r"\.(sum|avg|max|min)(\..*)?$", "", tok[0]))
    chosen = [n for n in WANT if n in names]
    if minimal:
        inst = [n for n in chosen if "inst_executed_pipe_tensor" in n][:1] or [WANT[0]]
        chosen = inst + ["gpu__time_duration"]
    chosen += [] if minimal else sorted(n for n in names if EXTRA.match(n) and n not in chosen)[:12]
    print(",".join(n + (".sum" if not n.startswith("launch__") else "") for n in chosen))


def num(s):
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return None


def parse(path):
    rows = list(csv.reader(line for line in open(path, errors="replace") if line.startswith('"')))
    if not rows:
        print("no csv rows")
        return
    head, body = rows[0], rows[1:]
    ix = {h: i for i, h in enumerate(head)}
    kernels = {}
    for r in body:
        kid = r[ix["ID"]]
        k = kernels.setdefault(
            kid,
            {
                "name": r[ix["Kernel Name"]],
                "grid": r[ix.get("Grid Size", 0)],
                "block": r[ix.get("Block Size", 0)],
                "m": {},
            },
        )
        k["m"][r[ix["Metric Name"]]] = (r[ix["Metric Value"]], r[ix.get("Metric Unit", 0)])
    order = sorted(kernels, key=int)
    for kid in order:
        k = kernels[kid]
        print(f"kernel ID {kid}: {k['name'][:500]}\n  grid {k['grid']} block {k['block']}")
        for m, (v, u) in sorted(k["m"].items()):
            print(f"    {m} = {v} {u}")
    flash_main = [kid for kid in order if "combine" not in kernels[kid]["name"]]
    if len(flash_main) >= 2:
        dn, ca = kernels[flash_main[0]]["m"], kernels[flash_main[1]]["m"]
        print("ratios causal/dense (launch 2 / launch 1):")
        for m in sorted(dn):
            a, b = num(dn[m][0]), num(ca.get(m, ("", ""))[0])
            if a and b is not None:
                print(f"    {m}: {b:.0f} / {a:.0f} = {b / a:.6f}")
        print("  model: 128x64|128x128 tiles 0.515625, 64x64 0.507813, exact causal 0.500122")


if __name__ == "__main__":
    if sys.argv[1] == "minimal":
        pick(sys.argv[2], minimal=True)
    else:
        {"pick": pick, "parse": parse}[sys.argv[1]](sys.argv[2])
