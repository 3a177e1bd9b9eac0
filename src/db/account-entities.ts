// Accounts and third-party OAuth apps. Every secret (password, session, invitation, client secret, code, token) is stored
// only as a hash.
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const timestamp = () => p.datetime().columnType('timestamptz');

export type Role = 'owner' | 'member';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'app_user',
  properties: {
    id: p.string().primary(),
    email: p.string(),
    name: p.string().default(''),
    /** scrypt, self-describing (`scrypt$N$r$p$salt$hash`). */
    passwordHash: p.string(),
    /** The person's IANA zone for the console; null: the browser's (else the organization's). */
    timeZone: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type User = InferEntity<typeof UserSchema>;

export const MembershipSchema = defineEntity({
  name: 'Membership',
  tableName: 'membership',
  properties: {
    userId: p.string().primary(),
    organizationId: p.string().primary(),
    role: p.string().$type<Role>(),
    createdAt: timestamp().onCreate(() => new Date()),
  },
});
export type Membership = InferEntity<typeof MembershipSchema>;

export const InvitationSchema = defineEntity({
  name: 'Invitation',
  tableName: 'invitation',
  properties: {
    id: p.string().primary(),
    organizationId: p.string(),
    tokenHash: p.string().unique(),
    role: p.string().$type<Role>(),
    /** The owner who made the link; null for a setup link, made by the operator (first-start banner or CLI). */
    createdBy: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    expiresAt: timestamp(),
    usedAt: timestamp().nullable(),
    usedBy: p.string().nullable(),
  },
});
export type Invitation = InferEntity<typeof InvitationSchema>;

export const WebSessionSchema = defineEntity({
  name: 'WebSession',
  tableName: 'web_session',
  properties: {
    id: p.string().primary(),
    tokenHash: p.string().unique(),
    userId: p.string(),
    /** The organization the console shows (switchable among the user's memberships). */
    organizationId: p.string().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    lastSeenAt: timestamp(),
    expiresAt: timestamp(),
  },
});
export type WebSession = InferEntity<typeof WebSessionSchema>;

export type TokenEndpointAuthMethod = 'client_secret_post' | 'client_secret_basic' | 'none';

export const OAuthAppSchema = defineEntity({
  name: 'OAuthApp',
  tableName: 'oauth_app',
  properties: {
    id: p.string().primary(),
    /** The registering organization; null for apps registered dynamically (RFC 7591) by MCP clients. */
    organizationId: p.string().nullable(),
    name: p.string(),
    description: p.text().nullable(),
    pictureUrl: p.text().nullable(),
    redirectUris: p.json<string[]>(),
    clientId: p.string().unique(),
    clientSecretHash: p.string().nullable(),
    tokenEndpointAuthMethod: p.string().$type<TokenEndpointAuthMethod>(),
    dynamic: p.boolean().default(false),
    /**
     * A client identified by its metadata document (CIMD: the client id is the document's https URL): when the cached
     * document is fetched again (its HTTP caching headers). Null for apps registered in the console or dynamically.
     */
    metadataExpiresAt: timestamp().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    secretRotatedAt: timestamp().nullable(),
    deletedAt: timestamp().nullable(),
  },
});
export type OAuthApp = InferEntity<typeof OAuthAppSchema>;

export const OAuthTokenSchema = defineEntity({
  name: 'OAuthToken',
  tableName: 'oauth_token',
  properties: {
    id: p.string().primary(),
    appId: p.string(),
    userId: p.string(),
    organizationId: p.string(),
    tokenHash: p.string().unique(),
    scopes: p.json<string[]>(),
    /** The access token stops working then (about an hour, renewed by a refresh token); null: until revoked (older tokens, the spec's app flow). */
    expiresAt: timestamp().nullable(),
    /** The resource it was issued for (RFC 8707), one of Herald's MCP URLs or REST base; null: any. */
    resource: p.text().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    lastUsedAt: timestamp().nullable(),
    revokedAt: timestamp().nullable(),
  },
});
export type OAuthToken = InferEntity<typeof OAuthTokenSchema>;

export const OAuthCodeSchema = defineEntity({
  name: 'OAuthCode',
  tableName: 'oauth_code',
  properties: {
    id: p.string().primary(),
    codeHash: p.string().unique(),
    appId: p.string(),
    userId: p.string(),
    organizationId: p.string(),
    scopes: p.json<string[]>(),
    redirectUri: p.text(),
    /** The authorization request named redirect_uri, so the token request must repeat it (RFC 6749 §4.1.3). */
    redirectUriGiven: p.boolean(),
    /** S256 challenge (PKCE); null when the client sent none. */
    codeChallenge: p.string().nullable(),
    /** The resource the authorization request named (RFC 8707); the token is bound to it. */
    resource: p.text().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    expiresAt: timestamp(),
    usedAt: timestamp().nullable(),
    tokenId: p.string().nullable(),
  },
});
export type OAuthCode = InferEntity<typeof OAuthCodeSchema>;

/**
 * A refresh token of a grant (an `oauth_token` row), stored as its hash. Each exchange marks it used and issues the next;
 * a used one presented again revokes the grant (RFC 9700 §4.14.2).
 */
export const OAuthRefreshTokenSchema = defineEntity({
  name: 'OAuthRefreshToken',
  tableName: 'oauth_refresh_token',
  properties: {
    tokenHash: p.string().primary(),
    tokenId: p.string(),
    createdAt: timestamp().onCreate(() => new Date()),
    expiresAt: timestamp(),
    usedAt: timestamp().nullable(),
  },
});
export type OAuthRefreshToken = InferEntity<typeof OAuthRefreshTokenSchema>;

export type DeviceCodeStatus = 'pending' | 'approved' | 'denied' | 'used';

/** A device authorization (RFC 8628): the device code is stored hashed, the short user code as typed (normalized). */
export const DeviceCodeSchema = defineEntity({
  name: 'DeviceCode',
  tableName: 'oauth_device_code',
  properties: {
    id: p.string().primary(),
    deviceCodeHash: p.string().unique(),
    userCode: p.string(),
    appId: p.string(),
    /** Requested scopes until approved, then the granted ones. */
    scopes: p.json<string[]>(),
    clientUserAgent: p.text().nullable(),
    clientAddress: p.string().nullable(),
    intervalSeconds: p.integer(),
    status: p.string().$type<DeviceCodeStatus>(),
    userId: p.string().nullable(),
    organizationId: p.string().nullable(),
    tokenId: p.string().nullable(),
    lastPolledAt: timestamp().nullable(),
    decidedAt: timestamp().nullable(),
    createdAt: timestamp().onCreate(() => new Date()),
    expiresAt: timestamp(),
  },
});
export type DeviceCode = InferEntity<typeof DeviceCodeSchema>;

export const accountEntities = [UserSchema, MembershipSchema, InvitationSchema, WebSessionSchema, OAuthAppSchema, OAuthTokenSchema, OAuthCodeSchema, OAuthRefreshTokenSchema, DeviceCodeSchema];
