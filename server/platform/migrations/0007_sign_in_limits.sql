-- Sign-in attempts are counted by rate-limiter-flexible's PostgreSQL store (one atomic upsert per attempt),
-- replacing the read-then-write failure counts.
CREATE TABLE "sign_in_limits" (
	"key" varchar(255) PRIMARY KEY NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"expire" bigint
);
--> statement-breakpoint
DROP TABLE "sign_in_attempts" CASCADE;