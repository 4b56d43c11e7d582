CREATE TABLE "endpoint_disabled_methods" (
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"method" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "endpoint_disabled_methods_endpoint_id_method_pk" PRIMARY KEY("endpoint_id","method")
);
--> statement-breakpoint
CREATE TABLE "endpoint_jwts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"name" text NOT NULL,
	"kid" text NOT NULL,
	"public_key" text NOT NULL,
	"fingerprint" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "endpoint_security" (
	"endpoint_id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"jwts" boolean DEFAULT false NOT NULL,
	"tokens" boolean DEFAULT false NOT NULL,
	"referrers" boolean DEFAULT false NOT NULL,
	"domain_masks" boolean DEFAULT false NOT NULL,
	"ips" boolean DEFAULT false NOT NULL,
	"request_filters" boolean DEFAULT false NOT NULL,
	"ip_custom_header" boolean DEFAULT false NOT NULL,
	"hsts" boolean DEFAULT false NOT NULL,
	"cors" boolean DEFAULT false NOT NULL,
	"enforce_chain_network" boolean DEFAULT false NOT NULL,
	"ip_custom_header_name" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "endpoint_security_entries" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"value" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "endpoint_tokens" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"endpoint_id" uuid NOT NULL,
	"token_hash" text NOT NULL,
	"token_prefix" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "endpoint_tokens_token_hash_unique" UNIQUE("token_hash")
);
--> statement-breakpoint
ALTER TABLE "endpoint_disabled_methods" ADD CONSTRAINT "endpoint_disabled_methods_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_disabled_methods" ADD CONSTRAINT "endpoint_disabled_methods_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_jwts" ADD CONSTRAINT "endpoint_jwts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_jwts" ADD CONSTRAINT "endpoint_jwts_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_security" ADD CONSTRAINT "endpoint_security_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_security" ADD CONSTRAINT "endpoint_security_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_security_entries" ADD CONSTRAINT "endpoint_security_entries_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_security_entries" ADD CONSTRAINT "endpoint_security_entries_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_tokens" ADD CONSTRAINT "endpoint_tokens_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "endpoint_tokens" ADD CONSTRAINT "endpoint_tokens_endpoint_id_endpoints_id_fk" FOREIGN KEY ("endpoint_id") REFERENCES "public"."endpoints"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "endpoint_jwts_endpoint_kid" ON "endpoint_jwts" USING btree ("endpoint_id","kid");--> statement-breakpoint
CREATE UNIQUE INDEX "endpoint_security_entries_value" ON "endpoint_security_entries" USING btree ("endpoint_id","kind",lower("value"));--> statement-breakpoint
CREATE UNIQUE INDEX "endpoint_security_domain_mask_host" ON "endpoint_security_entries" USING btree (lower("value")) WHERE "endpoint_security_entries"."kind" = 'DOMAIN_MASK';--> statement-breakpoint
CREATE INDEX "endpoint_tokens_endpoint" ON "endpoint_tokens" USING btree ("endpoint_id");