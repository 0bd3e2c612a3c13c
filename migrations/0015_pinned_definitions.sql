-- Pinned definitions (docs/security.md "The MCP gateway"): the definition of each upstream tool in
-- force, as the upstream listed it when it was last registered. A later sync that lists a changed
-- definition holds the change in upstream_quarantine (check `changed`, with what changed) and keeps
-- this one in force until a person releases the change. NULL for rows from before this column: the
-- next sync pins what it reads.
ALTER TABLE upstream_tools ADD COLUMN definition TEXT;
