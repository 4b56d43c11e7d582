/**
 * The sign-up limit test services run with: every test signs up its accounts from 127.0.0.1, some
 * files dozens. Tests of the limit itself start the service with a low NODEPLANE_SIGNUPS_PER_HOUR.
 */
export const TEST_SIGNUPS_PER_HOUR = "10000";
