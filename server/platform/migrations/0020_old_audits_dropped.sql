DROP TABLE "rate_limit_audits" CASCADE;--> statement-breakpoint
DROP TABLE "security_audits" CASCADE;