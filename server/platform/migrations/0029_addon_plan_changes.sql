CREATE TABLE "addon_plan_changes" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"account_id" uuid NOT NULL,
	"install_id" uuid NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL,
	"from_plan_slug" text NOT NULL,
	"from_interval" text NOT NULL,
	"to_plan_slug" text NOT NULL,
	"to_interval" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "addon_plan_changes" ADD CONSTRAINT "addon_plan_changes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "addon_plan_changes" ADD CONSTRAINT "addon_plan_changes_install_id_addon_installs_id_fk" FOREIGN KEY ("install_id") REFERENCES "public"."addon_installs"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "addon_plan_changes_install" ON "addon_plan_changes" USING btree ("install_id","changed_at");