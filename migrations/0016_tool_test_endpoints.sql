-- Test endpoints (docs/api.md "Try before apply"): a tool may name an address that only a try run
-- of a revision calls, with the model's picked arguments, never production traffic. JSON
-- {"url", "token_sealed"} (the optional bearer token sealed like upstream header values), or NULL.
-- Not part of the model view, the routing text, the tool's versions or an export.
ALTER TABLE tools ADD COLUMN test_endpoint TEXT;
