-- The pipeline's churned tables. Each message row is updated a few times within seconds of its
-- insert (claim, acceptance, delivery): room left in each page keeps those updates HOT (no new
-- index entries, old versions pruned on the page), and per-table autovacuum settings make a
-- server with autovacuum on clean them by the thousand rows rather than by a fifth of the table.
-- A server with autovacuum off is looked after by Shiri's own vacuum pass (src/db/vacuum.ts).

ALTER TABLE messages SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE message_parts SET (fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0.02);
ALTER TABLE webhook_events SET (fillfactor = 85, autovacuum_vacuum_scale_factor = 0.02,
  autovacuum_vacuum_threshold = 5000, autovacuum_analyze_scale_factor = 0.02);
-- Small and rewritten all the time: vacuumed after a few hundred dead rows whatever its size.
ALTER TABLE early_receipts SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 500);
ALTER TABLE idempotency_keys SET (autovacuum_vacuum_scale_factor = 0.05);
-- Insert-only, large: statistics kept fresh for the per-account queries.
ALTER TABLE ledger_entries SET (autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02);
