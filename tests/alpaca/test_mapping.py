"""The Alpaca mapping tables, read both ways from one table."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import structlog

from service.alpaca import mapping as m
from service.types import Bar, OrderOutcome, OrderStatus, Position, Side


@pytest.mark.parametrize(("theirs", "ours"), m.ORDER_STATUS)
def test_every_alpaca_status_maps_to_ours_and_ours_maps_back_to_its_first_row(
    theirs: str, ours: OrderStatus
) -> None:
    assert m.status_from_alpaca(theirs) == ours
    canonical = m.status_to_alpaca(ours)
    assert m.status_from_alpaca(canonical) == ours
    assert canonical == next(t for t, o in m.ORDER_STATUS if o == ours)


def test_every_status_but_the_unsent_ones_has_an_alpaca_name() -> None:
    unsent = {OrderStatus.PENDING, OrderStatus.UNKNOWN}
    assert {o for _, o in m.ORDER_STATUS} == set(OrderStatus) - unsent


@pytest.mark.parametrize(("theirs", "ours"), m.SIDE)
def test_sides_map_both_ways(theirs: str, ours: Side) -> None:
    assert m.side_from_alpaca(theirs) == ours and m.side_to_alpaca(ours) == theirs


def test_an_unknown_status_names_the_table_to_extend() -> None:
    with structlog.testing.capture_logs() as logs:
        assert m.status_from_alpaca("teleported") == OrderStatus.UNKNOWN
    assert "ORDER_STATUS" in logs[0]["next"]


@pytest.mark.parametrize(
    "outcome",
    [
        OrderOutcome("rt-a-1-SPY", OrderStatus.FILLED, "id-1", 2.0, 101.5, symbol="SPY",
                     side=Side.BUY),
        OrderOutcome("rt-a-2-QQQ", OrderStatus.ACCEPTED, "id-2", symbol="QQQ", side=Side.SELL),
    ],
)
def test_an_order_outcome_round_trips_through_alpaca_json(outcome: OrderOutcome) -> None:
    assert m.order_to_outcome(m.outcome_to_order(outcome, qty=2.0)) == outcome


def test_positions_round_trip_and_numbers_come_as_strings() -> None:
    for position in (Position("SPY", 3.0, 101.25), Position("QQQ", -2.0, 50.5)):
        json = m.position_to_alpaca(position)
        assert isinstance(json["qty"], str)
        assert m.position_from_alpaca(json) == position


@pytest.mark.parametrize(
    ("interval", "timeframe"),
    [(timedelta(minutes=1), (1, "Min")), (timedelta(minutes=15), (15, "Min")),
     (timedelta(hours=4), (4, "Hour")), (timedelta(days=1), (1, "Day"))],
)
def test_intervals_map_to_timeframes_and_back(
    interval: timedelta, timeframe: tuple[int, str]
) -> None:
    assert m.interval_to_timeframe(interval) == timeframe
    assert m.timeframe_to_interval(*timeframe) == interval


def test_an_interval_alpaca_cannot_serve_is_refused() -> None:
    with pytest.raises(m.MappingError, match="no Alpaca timeframe"):
        m.interval_to_timeframe(timedelta(seconds=30))


def test_a_bar_is_stamped_with_its_close_ours_and_its_start_theirs() -> None:
    bar = Bar(datetime(2026, 1, 5, 14, 31, tzinfo=UTC), 1.0, 2.0, 0.5, 1.5, 100.0)
    json = m.bar_to_alpaca(bar, timedelta(minutes=1))
    assert json["t"] == "2026-01-05T14:30:00Z" and json["n"] is None and "vw" in json
    assert m.bar_from_alpaca(json, timedelta(minutes=1)) == bar


def test_nanosecond_timestamps_are_read() -> None:
    assert m.time_from_alpaca("2026-01-05T14:30:00.123456789Z") == datetime(
        2026, 1, 5, 14, 30, 0, 123456, tzinfo=UTC)


# -- issue 12: RFC 3339 with any offset; values Alpaca may add --------------------------------

NY_WINTER = datetime(2026, 12, 1, 14, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-12-01T09:30:00-05:00", NY_WINTER),  # Alpaca's clock, winter
        ("2026-07-01T09:30:00-04:00", datetime(2026, 7, 1, 13, 30, tzinfo=UTC)),  # summer
        ("2026-12-01T09:30:00.123456789-05:00", NY_WINTER.replace(microsecond=123456)),
        ("2026-12-01T14:30:00.5Z", NY_WINTER.replace(microsecond=500000)),
        ("2026-12-01T14:30:00.1234567+00:00", NY_WINTER.replace(microsecond=123456)),
        ("2026-12-01t14:30:00z", NY_WINTER),
        ("2026-12-01T14:30:00-00:00", NY_WINTER),
        ("2026-12-01T20:00:00+05:30", NY_WINTER),
        ("2026-12-01 09:30:00-05:00", NY_WINTER),
        ("2026-12-01T14:30:00.000000001Z", NY_WINTER),
    ],
)
def test_rfc3339_times_with_any_offset_and_fraction_are_read_as_utc(
    text: str, expected: datetime
) -> None:
    got = m.time_from_alpaca(text)
    assert got == expected and got.utcoffset() == timedelta(0)


@pytest.mark.parametrize("text", ["", "2026-12-01T09:30:00", "2026-12-01T09:30:00.Z",
                                  "2026-12-01T09:30:00.1234567890Z", "yesterday",
                                  "2026-12-01T09:30:00+25:00", "2026-13-01T09:30:00Z"])
def test_a_time_that_is_not_rfc3339_is_refused_naming_it(text: str) -> None:
    with pytest.raises(m.MappingError, match="RFC 3339"):
        m.time_from_alpaca(text)


def test_an_unknown_status_or_side_is_an_unknown_outcome_warned_once_per_value() -> None:
    order = {"id": "id-9", "client_order_id": "rt-a-9-SPY", "status": "teleported-x1",
             "side": "sideways-x1", "symbol": "SPY", "filled_qty": "0", "type": "warp",
             "time_in_force": "forever", "asset_class": "quantum"}
    with structlog.testing.capture_logs() as logs:
        outcomes = [m.order_to_outcome(order) for _ in range(3)]
    assert all(o.status == OrderStatus.UNKNOWN and o.side is None for o in outcomes)
    warned = [(e["field"], e["value"]) for e in logs if e["event"] == "alpaca.unknown_value"]
    assert warned == [("status", "teleported-x1"), ("side", "sideways-x1")]
