"""The status document as text: the daemon, then one aligned block per account."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

POSITION_HEADER = ["SYMBOL", "HELD", "TARGET", "LAST", "AVG ENTRY", "UNREALISED", "REGIME",
                   "P(TURBULENT)"]
ORDER_HEADER = ["ID", "SEQ", "SYMBOL", "SIDE", "QTY", "FILLED", "STATUS"]
LABEL_WIDTH = 13
TROUBLE = frozenset({"parked", "restarting", "hung"})  # states whose `cause` is shown


def render_text(doc: dict[str, Any]) -> str:
    lines = [*_daemon(doc), ""]
    for account in doc["accounts"]:
        lines += [*_account(account), ""]
    return "\n".join(lines)


def _daemon(doc: dict[str, Any]) -> list[str]:
    d = doc["daemon"]
    state = d["state"].replace("_", " ")
    if d["state"] in ("running", "stopping"):
        said = (f"{state}: pid {d['pid']}, heartbeat {_age(d['heartbeat_age_s'])} ago, "
                f"started {d['started_at']}, version {d['version']}")
    elif d["state"] == "stopped":
        said = f"stopped at {d['stopped_at']} (pid {d['pid']})"
    else:
        said = f"{state}: {d['reason']}"
    config = f"config {doc['config_hash']}"
    if d["config_hash"] and d["config_hash"] != doc["config_hash"]:
        config += f" (the daemon's: {d['config_hash']})"
    lines = [f"daemon  {said}", f"state   {doc['state_dir']}  {config}"]
    device = d.get("device")
    if device and device.get("state") != "off":  # [model] shared_device
        pid = f", pid {device['pid']}" if device.get("pid") else ""
        lines.append(f"device  {device['state']}{pid}, started {device.get('starts')} times")
    return lines


def _account(a: dict[str, Any]) -> list[str]:
    lines = [f"{a['account']}  {_state(a)}"]
    if a["cause"] and TROUBLE & {a["state"], a["last_state"]}:  # else an old, healed one
        lines.append(_line("cause", _error(a["cause"])))
    lines += _body(a)
    error = _error(a["last_error"], a["reason"]) if a["last_error"] else "none"
    lines.append(_line("last error", error))
    return lines


def _body(a: dict[str, Any]) -> list[str]:
    if a["error"]:
        return [_line("unreadable", a["error"])]
    update = a["last_update"]
    if update is None:
        return [_line("no state yet", a["database"])]
    lines = [_line("last update", _update(update))]
    if a["live_error"]:
        lines.append(_line("not live", a["live_error"]))
    lines += _money(a)
    lines += ["  " + row for row in _align([POSITION_HEADER, *map(_position, a["positions"])],
                                           right=range(1, 8))]
    lines += [f"  {w['symbol']}  warming up: {_warming(w)}" for w in a["warming"]]
    return lines + _orders(a["open_orders"])


def _state(a: dict[str, Any]) -> str:
    state = str(a["state"]).replace("_", " ")
    if a["state"] in ("not_running", "unknown") and a["last_state"]:
        state += f" (last seen {a['last_state']})"
    if a["reason"]:
        state += f": {a['reason']}"
    if a["health"] == "unreadable":
        state += ", its database unreadable"
    return state


def _update(u: dict[str, Any]) -> str:
    said = f"seq {u['seq']}, bar {u['bar_time']}"
    if u["age_s"] is not None:
        said += f", {_age(u['age_s'])} ago"
    if u["duration_ms"] is not None:
        said += f" ({u['duration_ms']:.0f} ms, {u['orders']} orders)"
    return f"{said}, {u['backend']}"


def _money(a: dict[str, Any]) -> list[str]:
    source = "the broker, now" if a["source"] == "broker" else "the last reconciliation"
    lines = [_line("equity", f"{_cash(a['equity'])}  cash {_cash(a['cash'])}  (from {source})")]
    pnl = a["pnl"] or {}
    for label, key in (("P&L start", "since_start"), ("P&L today", "today")):
        period = pnl.get(key)
        if period is not None:
            lines.append(_line(label, _period(period)))
    return lines


def _period(p: dict[str, Any]) -> str:
    split = ("realised, unrealised unknown (baseline pruned)" if p["realised"] is None
             else f"realised {_signed(p['realised'])}, unrealised {_signed(p['unrealised'])}")
    day = f" on {p['day']}" if "day" in p else ""
    return f"{_signed(p['total'])}{day}  ({split}; from seq {p['from_seq']})"


def _position(p: dict[str, Any]) -> list[str]:
    regime = "warming" if p["warming"] and p["regime"] is None else _text(p["regime"])
    return [p["symbol"], _qty(p["held"]), _qty(p["target"]), _price(p["last_close"]),
            _price(p["avg_entry_price"]), _cash(p["unrealised"]), regime,
            "-" if p["p_turbulent"] is None else f"{p['p_turbulent']:.3f}"]


def _orders(orders: list[dict[str, Any]]) -> list[str]:
    if not orders:
        return [_line("open orders", "none")]
    rows = [[o["client_order_id"], _text(o["seq"]), o["symbol"] or "-", o["side"] or "-",
             _qty(o["qty"]), _qty(o["filled_qty"]), o["status"]] for o in orders]
    return [_line("open orders", str(len(orders))),
            *("  " + row for row in _align([ORDER_HEADER, *rows], right=(1, 4, 5)))]


def _warming(w: dict[str, Any]) -> str:
    if w["stage"] == "model":
        return f"model warm-up running on {w['bars_available']} bars, not traded yet"
    return f"{w['bars_available']} of {w['bars_needed']} bars"


def _error(e: dict[str, Any], said_above: str | None = None) -> str:
    how = ", ".join(f"{k} {e[k]}" for k in ("exit_code", "signal") if e.get(k) is not None)
    why = e.get("reason") or e.get("error") or ""
    why = "(the reason above)" if why and why == said_above else why
    return f"{e.get('event')} at {e.get('at')}: " + "; ".join(str(x) for x in (how, why) if x)


def _line(label: str, text: str) -> str:
    return f"  {label.ljust(LABEL_WIDTH)} {text}"


def _align(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i in right else cell.ljust(w)
                      for i, (cell, w) in enumerate(zip(row, widths, strict=True))).rstrip()
            for row in rows]


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    if seconds < 120:
        return f"{seconds:.1f}s" if seconds < 10 else f"{seconds:.0f}s"
    return f"{seconds / 60:.0f}m" if seconds < 7200 else f"{seconds / 3600:.1f}h"


def _cash(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+,.2f}"


def _price(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def _qty(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _text(value: object) -> str:
    return "-" if value is None else str(value)
