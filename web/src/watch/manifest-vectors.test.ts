import { describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import schema from '../../../shared/schemas/manifest.schema.json';
import vectors from '../../../shared/vectors/manifests.json';
import { ManifestError, parseManifest } from './manifest';

interface ManifestVector {
  name: string;
  manifest: unknown;
  valid: boolean;
  schema_valid?: boolean;
  error?: string;
}

const validate = new Ajv2020({ allErrors: true }).compile(schema);

describe('manifest vectors (shared/vectors/manifests.json)', () => {
  for (const vector of vectors.vectors as ManifestVector[]) {
    it(vector.name, () => {
      expect(validate(vector.manifest), JSON.stringify(validate.errors)).toBe(
        vector.schema_valid ?? vector.valid,
      );
      if (vector.valid) {
        expect(() => parseManifest(vector.manifest)).not.toThrow();
      } else {
        expect(() => parseManifest(vector.manifest)).toThrow(ManifestError);
        expect(() => parseManifest(vector.manifest)).toThrow(vector.error ?? '');
      }
    });
  }
});
