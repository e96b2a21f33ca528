import type { Page } from 'playwright-core';

/** The widths the finance page is checked at: a phone, a tablet, a laptop, a desktop. */
export const PAGE_WIDTHS = [390, 768, 1366, 1920] as const;

/** A major-unit amount as the page shows it: grouped digits, the currency's two decimals, the code. */
export const AMOUNT_TEXT = /^-?\d{1,3}(,\d{3})*\.\d{2} [A-Z]{3}$/;

/** What `amountsAndButtons` found on the page. */
export interface SightReport {
  /** Texts of the amounts looked at, in page order. */
  amounts: string[];
  /** Labels of the buttons looked at, in page order. */
  buttons: string[];
  /** Each amount or button not wholly in sight, with the reason. */
  problems: string[];
}

/**
 * Every amount (`[data-testid=amount]`, the net figures `[data-testid=net-flow] dd`) and every
 * visible button of the page, checked to lie wholly inside the viewport's width and inside every
 * box around it that clips (overflow other than visible: a table's sideways scroll box), and (for
 * amounts) with no text cut off. A problem is named `what "text": reason`.
 */
export async function amountsAndButtons(page: Page): Promise<SightReport> {
  // Browser-side code as text: this project compiles without the DOM library.
  return page.evaluate(`(() => {
    const width = window.innerWidth;
    const problems = [];
    const text = (el) => el.textContent.replace(/\\s+/g, ' ').trim();
    const check = (el, what) => {
      const r = el.getBoundingClientRect();
      const name = what + ' "' + text(el) + '"';
      if (r.left < -0.5 || r.right > width + 0.5) problems.push(name + ': outside the viewport (' + Math.round(r.left) + '→' + Math.round(r.right) + ' of ' + width + ')');
      for (let box = el.parentElement; box && box !== document.body; box = box.parentElement) {
        const style = getComputedStyle(box);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const b = box.getBoundingClientRect();
        if (r.left < b.left - 0.5 || r.right > b.right + 0.5) {
          problems.push(name + ': cut by ' + box.tagName.toLowerCase() + '.' + box.className + ' (' + Math.round(r.left) + '→' + Math.round(r.right) + ' in ' + Math.round(b.left) + '→' + Math.round(b.right) + ')');
          break;
        }
      }
    };
    const shown = (el) => {
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
    };
    const amounts = [...document.querySelectorAll('[data-testid=amount], [data-testid=net-flow] dd')].filter(shown);
    for (const el of amounts) {
      check(el, 'amount');
      if (el.scrollWidth > el.clientWidth + 1) problems.push('amount "' + text(el) + '": text cut (' + el.scrollWidth + ' > ' + el.clientWidth + ')');
    }
    const buttons = [...document.querySelectorAll('button')].filter(shown);
    for (const el of buttons) check(el, 'button');
    return { amounts: amounts.map(text), buttons: buttons.map(text), problems };
  })()`);
}
