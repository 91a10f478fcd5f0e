// The holds routes (issue 49) in the shape openapi-typescript gives
// `paths`, written by hand against the decided contract until openapi.yaml describes them; then
// `npm run generate` brings them into src/generated/openapi.ts and this file goes.
import type { components } from "./generated/openapi.js";
import type { CreateHoldInput, Hold, HoldPage } from "./types.js";

type Json<T> = { headers: { [name: string]: unknown }; content: { "application/json": T } };
type Refusal = Json<components["schemas"]["Error"]>;
type Refusals = { 400: Refusal; 401: Refusal; 404: Refusal; 409: Refusal; 422: Refusal; 429: Refusal; 503: Refusal };
type Params<Q = never, P = never, H = never> = { query?: Q; header?: H; path: P; cookie?: never };
type Body<B> = { content: { "application/json": B } };
/** A call without a body. */
type Call<P, R> = { parameters: P; requestBody?: never; responses: R & Refusals };
/** A call with a body. */
type Send<P, B, R> = { parameters: P; requestBody: Body<B>; responses: R & Refusals };

interface NoMethods {
  parameters: { query?: never; header?: never; path?: never; cookie?: never };
  get?: never;
  put?: never;
  post?: never;
  delete?: never;
  options?: never;
  head?: never;
  patch?: never;
  trace?: never;
}
type Route<M> = Omit<NoMethods, keyof M> & M;
type HoldId = { holdId: string };
type Listing<S> = { state?: S; after?: string; limit?: number };

export interface pendingPaths {
  "/v1/holds": Route<{
    get: Call<{ query?: Listing<"active" | "released">; header?: never; path?: never; cookie?: never }, { 200: Json<HoldPage> }>;
    post: Send<{ query?: never; header?: never; path?: never; cookie?: never }, CreateHoldInput, { 200: Json<Hold>; 201: Json<Hold> }>;
  }>;
  "/v1/holds/{holdId}": Route<{ get: Call<Params<never, HoldId>, { 200: Json<Hold> }> }>;
  "/v1/holds/{holdId}/release": Route<{ post: Call<Params<never, HoldId>, { 200: Json<Hold> }> }>;
}
