/**
 * Answer schemas of the endpoint rows (TypeBox): each is the JSON Schema /openapi.json publishes
 * and, through `defineEndpoint`, the type its handler must return — one source for both.
 */
import { Type } from '@sinclair/typebox';
import { PRODUCTS } from '../credits/products.ts';

const timestamp = Type.String({ description: 'ISO 8601 UTC with microseconds, as Laravel 8 writes dates.', examples: ['2026-11-22T10:15:30.123456Z'] });

export const SearchResponse = Type.Object({
  response: Type.Array(
    Type.Object({
      title: Type.String(),
      description: Type.String(),
      meta_data: Type.String({ description: 'The display link shown with the result, "" when none.' }),
      url: Type.String(),
    }),
  ),
});

export const PdfResponse = Type.Object({
  metadata: Type.Object({
    word_count: Type.Integer(),
    character_count: Type.Integer(),
    page_count: Type.Integer(),
    file_size: Type.String({ description: '"<kilobytes with two decimals> KB"' }),
    creation_date: Type.Optional(Type.String({ description: '`D:YYYYMMDDHHmmssZ`; absent when unknown.' })),
    ocr_pages: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { description: 'Pages read by OCR (with `ocr: true`); absent when none.' })),
  }),
  pages: Type.Array(Type.Object({ page: Type.Integer({ minimum: 1 }), text: Type.String() })),
});

export const ImageResponse = Type.Object({ text: Type.String() });

const Balances = Type.Object(Object.fromEntries(PRODUCTS.map((product) => [product, Type.Integer()])) as Record<(typeof PRODUCTS)[number], ReturnType<typeof Type.Integer>>);

export const UserResponse = Type.Object({
  user: Type.Object({
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String(),
    credits: Type.Integer({ description: 'The scraping balance.' }),
    created_at: timestamp,
    updated_at: timestamp,
    balances: Balances,
  }),
});

const pageUrl = Type.Union([Type.String(), Type.Null()]);

export const RequestsResponse = Type.Object({
  current_page: Type.Integer(),
  data: Type.Array(
    Type.Object({
      id: Type.Integer(),
      request_id: Type.String(),
      method: Type.String(),
      endpoint: Type.String(),
      product: Type.Union([Type.String(), Type.Null()]),
      status: Type.Integer(),
      credits: Type.Integer({ description: 'Credits charged (0 for a failure).' }),
      duration_ms: Type.Integer(),
      params: Type.Record(Type.String(), Type.Unknown(), { description: 'The request as sent, secrets left out.' }),
      created_at: timestamp,
    }),
  ),
  first_page_url: Type.String(),
  from: Type.Union([Type.Integer(), Type.Null()]),
  next_page_url: pageUrl,
  path: Type.String(),
  per_page: Type.Integer(),
  prev_page_url: pageUrl,
  to: Type.Union([Type.Integer(), Type.Null()]),
});
