// What a person reads on a console page must be in their time (issue 36): the times a page would show them in UTC.
import type { Page } from 'playwright-core';

/** Times a person would read in UTC on the page: an instant as the API writes it, or anything named UTC (with its context). */
export async function utcTimes(page: Page): Promise<string[]> {
  const text = await page.locator('body').innerText();
  return [...text.matchAll(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}\S*Z\b|[^\n]{0,40}\bUTC\b[^\n]{0,40}/g)].map((match) => match[0]);
}
