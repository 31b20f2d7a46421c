// What the server's main needs from the HTTP layer.

export { createApiHandler, createRouter, defaultTableConvertorFor } from './api-handler.js';
export type { ApiHandlerOptions, NonResourceHandler, NonResourceRequest, RawResponse } from './api-handler.js';
export { createSecureServer } from './server.js';
export type { SecureServer, SecureServerOptions } from './server.js';
export { createX509Authenticator, parseCertificates } from '../authn/x509.js';
export { anonymousUser, unionAuthenticator, withAuthenticatedGroup } from '../authn/authenticator.js';
export type { AuthenticationRequest, Authenticator } from '../authn/authenticator.js';
export { alwaysAllow, alwaysDeny, forbidden, unionAuthorizer } from '../authz/authorizer.js';
export type { AuthorizationAttributes, AuthorizationResult, Authorizer, Decision } from '../authz/authorizer.js';
export type { AnonymousOptions } from './filters/authentication.js';
export { logCheck, namedCheck, pingCheck, shutdownCheck } from './health.js';
export type { HealthCheck, HealthOptions } from './health.js';
export { defaultVersionInfo } from '../machinery/version.js';
export type { VersionInfo } from '../machinery/version.js';
