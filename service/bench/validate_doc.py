"""docs/validation.md, written from one `bench validate` report: every figure comes from
the report's JSON (committed beside it); the prose between the tables has none."""

from __future__ import annotations

from typing import Any

NOTES = """\
## Reading the kill table

- A fault is killed when at least one check fails under it; the control run (no fault)
  must pass every check. Each check runs the real code path: `posterior`,
  `fit.fit_series`, the sampler, the worker's window (`InstrumentState`) and its update
  (`refresh`).
- A Metropolis-corrected sampler stays exact with a wrong gradient: the leapfrog map is
  reversible and volume-preserving for any force field, so a scaled gradient only lowers
  acceptance. No statistical check can see it; the gradient check does.
- Shared random streams make an instrument's chains copies of one another. R-hat and ESS
  can then look healthy (on S&P 500 they do); the chains' correlation is what shows it.
- Step-size adaptation aiming at the wrong rate leaves the sampler exact but wasteful (or,
  aimed high, slow to mix); the acceptance band of the worker path's warm updates sees it.
- The window shifted by one bar changes nothing a posterior check sees; the worker path's
  regime probability on the day the regime turns does.
- The step-size policy, the trajectory policy and the validation's history (the
  hmm_drive_1 warm-up fix, the SBC runs before it) are in docs/validation-history.md.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a table cell's own bars, as in |mean - ref|


def _verdict(passed: bool) -> str:
    return "pass" if passed else "**FAIL**"


def summary_lines(report: dict[str, Any]) -> list[str]:
    lines = [f"{c['name']:16s} {_verdict(c['passed']):9s} {c['seconds']:8.1f} s"
             for c in report["checks"]]  # fmt: skip
    for row in report.get("mutants", []):
        lines.append(f"mutant {row['name']:24s} "
                     f"{'killed by ' + ', '.join(row['failed']) if row['killed'] else 'SURVIVED'}")
    if "mutants" in report:
        lines.append(f"killed {report['killed']} of {report['planted']}")
    lines.append(f"suite {'passes' if report['passed'] else 'FAILS'} ({report['seconds']} s)")
    return lines


def render(report: dict[str, Any]) -> str:
    out = [
        "# Validation of the regime model and its sampler",
        "",
        f"Written by `{report['command']}` on {report['date']}, {report['machine']}, "
        f"Python {report['python']}, numpy {report['numpy']}, seed {report['seed']}, "
        f"SBC size {report['size']}; every figure below is in the JSON beside this file. "
        "Do not edit by hand: re-run the command.",
        "",
        "## Verdict",
        "",
        "| check | rule | result | seconds |",
        "|---|---|---|---|",
        *(f"| {c['name']} | {_cell(c['rule'])} | {_verdict(c['passed'])} | {c['seconds']} |"
          for c in report["checks"]),
        "",
    ]  # fmt: skip
    by_name = {c["name"]: c["figures"] for c in report["checks"]}
    out += _figures(by_name)
    if "mutants" in report:
        out += _kill_table(report)
    out.append(NOTES)
    return "\n".join(out)


def _figures(f: dict[str, Any]) -> list[str]:
    out = ["## Figures", ""]
    if "gradient" in f:
        errors = ", ".join(f"{k} {v:.1e}" for k, v in f["gradient"]["max_relative_error"].items())
        out += [f"- Gradient, largest relative error against central differences: {errors}.", ""]
    for K in (2, 3):
        s = f.get(f"sbc_k{K}")
        if s:
            out += [
                f"- SBC, K = {K}: {s['datasets']} datasets of T = {s['T']}, {s['warmup']} "
                f"warm-up + {s['draws']} draws x 4 chains"
                f"{', level-shift moves' if s.get('shift_moves') else ''}, {s['bins']} bins; "
                "chi-square per "
                f"parameter {s['chi2']}; p-values {s['p_value']}; smallest {s['min_p']} "
                f"against {s['level']}; divergences {s['divergences']}.",
            ]
    out.append("")
    if "posteriordb" in f:
        out += ["| posterior | worst z | sd ratio | worst R-hat | min bulk ESS | div. | "
                "acceptance | result |", "|---|---|---|---|---|---|---|---|"]
        for name, r in f["posteriordb"]["posteriors"].items():
            out.append(f"| {name} | {r['worst_z']} | {r['sd_ratio'][0]}-{r['sd_ratio'][1]} | "
                       f"{r['worst_rhat']} | {r['min_ess_bulk']} | {r['divergences']} | "
                       f"{r['acceptance']} | {_verdict(r['passed'])} |")
        out.append("")
    if "sp500_posterior" in f:
        r = f["sp500_posterior"]
        out += [f"- S&P 500 posterior: worst z {r['worst_z']}, sd ratio {r['sd_ratio'][0]}-"
                f"{r['sd_ratio'][1]}, worst R-hat {r['worst_rhat']}, min bulk ESS "
                f"{r['min_ess_bulk']}, divergences {r['divergences']}, chain correlation "
                f"{r['chain_correlation']}, acceptance {r['acceptance']}.", ""]
    if "worker_path" in f:
        r = f["worker_path"]
        judged = "; ".join(f"{d}: {p} (reference {r['reference'][d]:.4f})"
                           for d, p in r["p_turbulent"].items() if d in r["reference"])
        before = ", ".join(f"{d} {p}" for d, p in r["p_turbulent"].items()
                           if d not in r["reference"])
        out += [f"- Worker path, P(turbulent) at the last bar: {judged} (the bars before: "
                f"{before}); warm acceptance {r['warm_acceptance_mean']}.", ""]
    return out  # fmt: skip


def _kill_table(report: dict[str, Any]) -> list[str]:
    names = [c["name"] for c in report["checks"]]
    out = [
        f"## Power: {report['killed']} of {report['planted']} planted faults killed",
        "",
        "Each fault planted alone, the whole suite run under it at the quick size (SBC with "
        "40 datasets: the suite CI runs at every commit); x: the check fails.",
        "",
        f"| fault | {' | '.join(names)} | killed |",
        f"|---|{'---|' * len(names)}---|",
    ]
    for row in report["mutants"]:
        cells = ["x" if not row["checks"][n]["passed"] else "" for n in names]
        out.append(f"| {row['description']} (`{row['name']}`) | {' | '.join(cells)} | "
                   f"{'yes' if row['killed'] else '**no**'} |")
    return [*out, ""]
