-- The state database schema of the previous release (schema_version 1): no account,
-- no order epoch. Tests build old databases from it.
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE checkpoints (seq INTEGER PRIMARY KEY, bar_time TEXT NOT NULL,
    config_hash TEXT NOT NULL, backend TEXT NOT NULL, adapter TEXT NOT NULL,
    numerics TEXT NOT NULL, cash REAL NOT NULL, equity REAL NOT NULL, model BLOB NOT NULL,
    model_digest TEXT NOT NULL, book TEXT NOT NULL);
CREATE TABLE decisions (seq INTEGER NOT NULL, symbol TEXT NOT NULL, regime INTEGER NOT NULL,
    p_turbulent REAL NOT NULL, pred_mean REAL NOT NULL, pred_vol REAL NOT NULL,
    converged INTEGER NOT NULL, target_weight REAL NOT NULL, target_qty REAL NOT NULL,
    PRIMARY KEY (seq, symbol));
CREATE TABLE intents (client_order_id TEXT PRIMARY KEY, seq INTEGER NOT NULL,
    symbol TEXT NOT NULL, side TEXT NOT NULL, qty REAL NOT NULL, status TEXT NOT NULL,
    broker_order_id TEXT, filled_qty REAL NOT NULL DEFAULT 0, filled_avg_price REAL,
    reason TEXT);
CREATE INDEX intents_by_status ON intents (status);
INSERT INTO meta VALUES ('schema_version', '1');
