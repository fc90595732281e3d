/**
 * The DOM layer of the web extraction (src/adapters/web/extract/dom.ts): linkedom's nodes get
 * their listener maps lazily there, and events must still reach listeners as linkedom delivers
 * them; the walks that follow linkedom's node links find what its selectors find.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Event } from 'linkedom';
import { elementsWhere, findDescendant, parseDocument, type DomElement } from '../../src/adapters/web/extract/dom.ts';

interface EventNode {
  addEventListener(type: string, listener: unknown, options?: unknown): void;
  removeEventListener(type: string, listener: unknown): void;
  dispatchEvent(event: unknown): boolean;
  click(): void;
  onclick: unknown;
}
const events = (element: unknown) => element as EventNode;

describe('listeners on parsed nodes', () => {
  test('reach the target and bubble up to the document and its window, in order', () => {
    const document = parseDocument('<html><body><div><p id="p">text</p></div></body></html>') as unknown as { body: DomElement; querySelector(selector: string): DomElement; defaultView: EventNode };
    const paragraph = document.querySelector('#p');
    const seen: string[] = [];
    const log = (name: string) => (event: { eventPhase: number; target: unknown; currentTarget: unknown }) => seen.push(`${name}:${event.eventPhase}:${event.target === paragraph}`);
    events(paragraph).addEventListener('ping', log('p'));
    events(paragraph.parentElement).addEventListener('ping', log('div'));
    events(document).addEventListener('ping', log('document'));
    document.defaultView.addEventListener('ping', log('window'));
    assert.equal(events(paragraph).dispatchEvent(new Event('ping', { bubbles: true })), true);
    assert.deepEqual(seen, ['p:2:true', 'div:3:true', 'document:3:true', 'window:3:true']);
    seen.length = 0;
    events(paragraph).dispatchEvent(new Event('ping'));
    assert.deepEqual(seen, ['p:2:true'], 'an event that does not bubble stays on its target');
  });

  test('once, removal, handleEvent objects, stopImmediatePropagation and preventDefault behave as linkedom has them', () => {
    const element = parseDocument('<p>text</p>').body!.firstElementChild!;
    const calls: string[] = [];
    const once = () => calls.push('once');
    const removed = () => calls.push('removed');
    events(element).addEventListener('x', once, { once: true });
    events(element).addEventListener('x', removed);
    events(element).addEventListener('x', { handleEvent: () => calls.push('object') });
    events(element).removeEventListener('x', removed);
    events(element).dispatchEvent(new Event('x'));
    events(element).dispatchEvent(new Event('x'));
    assert.deepEqual(calls, ['once', 'object', 'object']);

    const stopping = parseDocument('<p>text</p>').body!.firstElementChild!;
    const order: string[] = [];
    events(stopping).addEventListener('y', (event: { stopImmediatePropagation(): void; preventDefault(): void }) => {
      order.push('first');
      event.preventDefault();
      event.stopImmediatePropagation();
    });
    events(stopping).addEventListener('y', () => order.push('second'));
    events(stopping.parentElement).addEventListener('y', () => order.push('parent'));
    assert.equal(events(stopping).dispatchEvent(new Event('y', { bubbles: true, cancelable: true })), false);
    assert.deepEqual(order, ['first']);
  });

  test('click() and on* handlers, which linkedom builds on listeners, still work', () => {
    const button = parseDocument('<button>go</button>').body!.firstElementChild!;
    let clicks = 0;
    events(button).onclick = () => {
      clicks += 1;
    };
    events(button).click();
    events(button).onclick = null;
    events(button).click();
    assert.equal(clicks, 1);
  });
});

describe('walks over the document', () => {
  test('find descendants in document order, skip the inside of <template>, and match what querySelectorAll matches', () => {
    const document = parseDocument('<main id="m"><p class="a">1</p><template><p class="a">no</p></template><div><p class="a">2<span class="a">3</span></p></div></main><p class="a">outside</p>');
    const main = document.querySelector('#m')!;
    const found = elementsWhere(main, (element) => element.getAttribute('class') === 'a');
    assert.deepEqual(found, [...main.querySelectorAll('.a')]);
    assert.deepEqual(found.map((element) => element.textContent), ['1', '23', '3']);
    assert.equal(findDescendant(main, (element) => element.localName === 'span')?.textContent, '3');
    assert.equal(findDescendant(main, (element) => element.parentElement?.localName === 'template') === null, true, 'nothing inside a <template> is found');
    assert.equal(findDescendant(main.querySelector('span')!, () => true) === null, true, 'an element without children has no descendant');
  });
});
