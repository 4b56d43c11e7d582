const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids that are not UUIDs can name no row; callers answer NOT_FOUND instead of asking the database. */
export const isUuid = (id: string) => uuidPattern.test(id);
