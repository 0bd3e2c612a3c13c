-- Who took a revision back, kept apart from who applied it: an undo used to overwrite
-- approved_by/approved_key, losing the audit of the apply.
ALTER TABLE revisions ADD COLUMN undone_at TEXT;
ALTER TABLE revisions ADD COLUMN undone_by TEXT;
ALTER TABLE revisions ADD COLUMN undone_key TEXT;
