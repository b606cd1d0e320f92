/**
 * The dashboard requests that both the benchmark at one size (`main.ts`) and the scale run
 * (`scale.ts`) time, defined once so that their figures are about the same requests.
 */

/** A benchmark request: its name in the reports and its body, without the API key. */
export interface NamedRequest {
  name: string;
  body: Record<string, unknown>;
}

/** Count per Day over the last 30 days, in a zone with a change of offset. */
export const COUNT_PER_DAY_30_DAYS: NamedRequest = {
  name: 'Count per Day, 30 days, Los Angeles',
  body: {
    graph_type: 'Single Line',
    granularity: 'Day',
    start: '30 days ago',
    end: 'now',
    IANA_time_zone: 'America/Los_Angeles',
  },
};

/** Count per Hour split by event over the last 3 days. */
export const COUNT_PER_HOUR_BY_EVENT_3_DAYS: NamedRequest = {
  name: 'Count per Hour split by event, 3 days',
  body: {
    graph_type: 'Multi Line',
    split: 'event',
    granularity: 'Hour',
    start: '3 days ago',
    end: 'now',
    IANA_time_zone: 'America/Los_Angeles',
  },
};
