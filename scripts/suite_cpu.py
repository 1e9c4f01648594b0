"""Sum the per-module CPU and wall seconds that tests/plugins/cpu_report.py wrote.

Usage: TEST_CPU_REPORT=/tmp/cpu scripts/test.sh -n 3 --dist worksteal -m "not serial"
       python scripts/suite_cpu.py /tmp/cpu [--top 40]
Prints the heaviest modules by CPU seconds, the total, and a last line of JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    modules: dict[str, dict[str, float]] = {}
    for path in sorted(args.folder.glob("cpu-*.json")):
        for module, row in json.loads(path.read_text()).items():
            total = modules.setdefault(module, {"cpu": 0.0, "wall": 0.0, "tests": 0})
            for key in total:
                total[key] += row[key]
    ranked = sorted(modules.items(), key=lambda kv: -kv[1]["cpu"])
    cpu = sum(row["cpu"] for row in modules.values())
    print(f"{'cpu s':>8} {'wall s':>8} {'tests':>5}  module")
    for module, row in ranked[:args.top]:
        print(f"{row['cpu']:8.1f} {row['wall']:8.1f} {int(row['tests']):5d}  {module}")
    print(f"total: {cpu:.0f} CPU-s in {len(modules)} modules")
    print(json.dumps({"cpu_seconds": round(cpu, 1), "modules": len(modules),
                      "top": [[m, round(r["cpu"], 1)] for m, r in ranked[:args.top]]}))


if __name__ == "__main__":
    main()
