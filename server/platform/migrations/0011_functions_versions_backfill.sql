-- Functions created before versions were kept: their current code is version 1.
INSERT INTO "function_versions" ("function_id", "account_id", "version", "code", "timeout_sec", "memory_mb")
SELECT "id", "account_id", "version", "code", "timeout_sec", "memory_mb" FROM "functions";
