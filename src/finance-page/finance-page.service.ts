import { Injectable } from '@nestjs/common';
import { FinancePageBundle, loadFinancePage, PageAsset } from './finance-page.assets';

/** Holds the finance page's files in memory (read once at start) and its response headers. */
@Injectable()
export class FinancePageService {
  private readonly bundle: FinancePageBundle = loadFinancePage();

  /** A file of the page (`index.html`, `app.js`, …) or undefined. */
  file(name: string): PageAsset | undefined {
    return this.bundle.page.get(name);
  }

  /** A browser library file (`preact.mjs`, `chart.umd.min.js`, …) or undefined. */
  vendorFile(name: string): PageAsset | undefined {
    return this.bundle.vendor.get(name);
  }

  /** Headers of every finance page answer: strict CSP (self only) and no framing or sniffing. */
  securityHeaders(): Record<string, string> {
    return {
      'content-security-policy': this.bundle.csp,
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
    };
  }
}
