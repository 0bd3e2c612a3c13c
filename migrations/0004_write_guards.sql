-- A compare-and-set guard for D1 batches (D1 has no interactive transactions). A batch that must
-- only go through while a row is in an expected state starts with
--   INSERT INTO write_guards (ok) SELECT COUNT(*) FROM … WHERE <expected state>
-- which violates the CHECK, and so rolls the whole batch back, when the state has moved on; the
-- batch ends by deleting its guard row, so the table stays empty.
CREATE TABLE write_guards (ok INTEGER NOT NULL CHECK (ok = 1));
