// Type-level contract checks: a body Herald builds must fit the platform SDK's request type exactly, both ways that matter
// (every field it sends is one the SDK declares, with a value of the declared type), so a misspelt or unknown field fails
// `npx tsc --noEmit`, which `npm test` runs first. Usage: `export const fits: FitsExactly<typeof body, SdkType> = true;`
// (when the body does not fit, the type is an object naming the problem and `true` is not assignable to it).

/** A type as it travels in JSON: string enums of the SDKs become their string values (`AllowedMentionsTypes` → "everyone" | …). */
export type Wire<T> = T extends string
  ? `${T}`
  : T extends readonly (infer E)[]
    ? Wire<E>[]
    : T extends (...args: never[]) => unknown
      ? T
      : T extends object
        ? { [K in keyof T]: Wire<T[K]> }
        : T;

type KeysOf<T> = T extends unknown ? keyof T : never;
type FieldOf<T, K> = T extends unknown ? (K extends keyof T ? NonNullable<T[K]> : never) : never;

/** The paths of the fields `Actual` has and `Shape` does not declare (at any depth), or never. */
export type UnknownFields<Actual, Shape, Path extends string = ''> = Actual extends readonly (infer E)[]
  ? UnknownFields<E, Shape extends readonly (infer F)[] ? F : never, `${Path}[]`>
  : Actual extends object
    ? {
        [K in keyof Actual & string]-?: K extends KeysOf<Shape> ? UnknownFields<Actual[K], FieldOf<Shape, K>, `${Path}.${K}`> : `${Path}.${K}`;
      }[keyof Actual & string]
    : never;

export type FitsExactly<Actual, Shape> = [Actual] extends [Shape]
  ? [UnknownFields<Actual, Shape>] extends [never]
    ? true
    : { unknownFields: UnknownFields<Actual, Shape> }
  : { notAssignable: Actual; to: Shape };
