import type * as Permissions from '../../../packages/platform/src/broker-permissions';

/** The broker users and their rights as the services' platform package defines them (built). */
const platform = require('../../../packages/platform/dist/broker-permissions.js') as typeof Permissions;

export const BROKER_USERS = platform.BROKER_USERS;
export const brokerPermissionsFor = (prefix: string) => platform.brokerPermissions(platform.prefixPatternOf(prefix));
