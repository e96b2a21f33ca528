/**
 * class-transformer's metadata store (its `@Transform`s per property), which the package ships as
 * cjs/storage.js with its types under types/: read by openapi-validators.ts to describe a field's
 * normalisation (trimmed, case-folded) in the API description.
 */
declare module 'class-transformer/cjs/storage' {
  export { defaultMetadataStorage } from 'class-transformer/types/storage';
}
