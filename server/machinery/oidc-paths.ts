// The URL paths of service account issuer discovery, which the OIDC handlers serve, the
// OpenAPI document lists and the default RBAC policy opens to everyone.

const urlPath = (...segments: string[]): string => `/${segments.join('/')}`;

export const OPENID_CONFIGURATION_PATH = urlPath('.well-known', 'openid-configuration');
export const JWKS_PATH = urlPath('openid', 'v1', 'jwks');
