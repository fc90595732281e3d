/**
 * The freelance-marketplace (Freelancer.com) objects the endpoints answer with, and the
 * parameters of the upstream operations (docs/freelance.md has the field mapping).
 */

export const PROJECT_TYPES = ['fixed', 'hourly'] as const;
export type ProjectType = (typeof PROJECT_TYPES)[number];

export const SEARCH_SORTS = ['latest', 'relevance'] as const;
export type SearchSort = (typeof SEARCH_SORTS)[number];

/** A budget in the project's own currency: a range of amounts (fixed) or of hourly rates (hourly). */
export interface Budget {
  min: number | null;
  max: number | null;
  /** ISO 4217 code (`USD`, `INR`, `GBP`), or null when the project names none. */
  currency: string | null;
}

/** One project as search lists it. */
export interface ProjectItem {
  id: number;
  /** The public page, `https://www.freelancer.com/projects/<category>/<slug>`. */
  url: string;
  title: string;
  description: string | null;
  type: ProjectType | null;
  budget: Budget;
  /** Skill names (Freelancer calls them jobs), in the project's order. */
  skills: string[];
  bid_count: number | null;
  /** The mean bid, in the budget's currency; null when bids are sealed or unknown. */
  average_bid: number | null;
  posted_at: string | null;
  /** The owner's country name, when the API gave the owner's details. */
  country: string | null;
  /** Freelancer's project status: `active`, `closed`, `frozen`, ... */
  status: string | null;
}

/** The project owner's public profile. */
export interface ProjectOwner {
  id: number;
  username: string | null;
  display_name: string | null;
  country: string | null;
  city: string | null;
  registered_at: string | null;
  payment_verified: boolean | null;
  /** Average rating as an employer (0 to 5), and how many reviews it rests on. */
  rating: number | null;
  reviews: number | null;
}

/** One project in full, as /v1/freelance/project answers it. */
export interface ProjectDetail extends ProjectItem {
  updated_at: string | null;
  /** Days the bidding stays open. */
  bid_period_days: number | null;
  language: string | null;
  /** The paid upgrades the project carries (`featured`, `urgent`, `sealed`, `NDA`...). */
  upgrades: string[];
  /** For hourly projects: the weekly (or other) commitment the owner asks for. */
  hourly: { hours: number | null; interval: string | null } | null;
  owner: ProjectOwner | null;
}

export interface SearchPage {
  projects: ProjectItem[];
  /** Matches in all, when the API says. */
  total: number | null;
}

/** One skill of Freelancer's catalogue (`/projects/0.1/jobs/`). */
export interface Job {
  id: number;
  name: string;
  seoUrl: string | null;
}

/** The search as the upstream is asked it: skills already resolved to job ids. */
export interface SearchParams {
  query: string;
  jobIds: number[];
  minBudget?: number;
  maxBudget?: number;
  projectType?: ProjectType;
  sort: SearchSort;
  limit: number;
  offset: number;
}

/** How a project is looked up: by id, or by its `seo_url` (`<category>/<slug>`). */
export type ProjectRef = { kind: 'id'; id: number } | { kind: 'seo_url'; seoUrl: string };
