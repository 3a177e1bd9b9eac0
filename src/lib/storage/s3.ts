// S3-compatible storage (AWS S3, R2, MinIO...): streamed multipart upload from the staged file, public URL from S3_PUBLIC_URL.
import fs from 'node:fs';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { S3Settings } from '../../config.js';
import type { Storage } from './index.js';

export function createS3Storage(settings: S3Settings): Storage {
  const client = new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.accessKeyId && settings.secretAccessKey ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey } : undefined,
    // Default CRC checksums (SDK ≥ 3.729) are refused by several S3-compatible servers; send them only where S3 requires them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    kind: 's3',
    async save(file, key, contentType) {
      const upload = new Upload({
        client,
        params: {
          Bucket: settings.bucket,
          Key: key,
          Body: fs.createReadStream(file),
          ContentType: contentType,
          CacheControl: 'public, max-age=31536000, immutable',
          ContentDisposition: 'inline',
        },
      });
      await upload.done();
      await fs.promises.rm(file, { force: true });
      return this.urlOf(key);
    },
    async read(key) {
      const { Body } = await client.send(new GetObjectCommand({ Bucket: settings.bucket, Key: key }));
      if (!Body) throw new Error(`storage object ${key} has no body`);
      return Body instanceof Readable ? Body : Readable.fromWeb((Body as { transformToWebStream(): ReadableStream }).transformToWebStream() as never);
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key: key }));
    },
    urlOf: (key) => `${settings.publicUrl}/${key}`,
  };
}
