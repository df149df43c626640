import { describe, expect, it } from 'vitest';
import { BRIDGED_ANSWER_PLACE, spreadNearCopies, withBridgedAnswer } from '../../src/memory/recall-coverage.js';
import { laterVersionOf, orderByTime, questionTime, timeMark } from '../../src/memory/recall-time.js';

const day = 86_400_000;
const stored = (id: number, text: string, daysAgo: number, confirmedDaysAgo = daysAgo, score = 0.5) => ({
  id,
  text,
  createdAt: new Date(Date.UTC(2026, 10, 1) - daysAgo * day),
  lastConfirmedAt: new Date(Date.UTC(2026, 10, 1) - confirmedDaysAgo * day),
  score,
});
/** A similarity table over result positions: `pairs` lists [i, j, similarity]; every other pair is 0.1. */
const similarities = (pairs: [number, number, number][]) => (i: number, j: number) =>
  pairs.find(([a, b]) => (a === i && b === j) || (a === j && b === i))?.[2] ?? 0.1;
const ids = (results: readonly { id: number }[]) => results.map((result) => result.id);

describe('timeMark and questionTime', () => {
  it.each([
    ['Robin now works at Globex Energy.', 2],
    ['Since last summer the user eats meat again.', 2],
    ['The user switched to Starling Bank in January 2025.', 2],
    ['The user no longer eats meat.', 2],
    // A change said by its verb: what the text says holds now.
    ['I upgraded to an iPhone 15 in March.', 2],
    ['The user moved into a flat in Portobello.', 2],
    ["I'm down to 76 kg after the diet.", 2],
    ['The user quit Pure Gym.', 2],
    ['The user gave up football for padel.', 2],
    ['The user changed to Octopus Energy.', 2],
    ['The user traded in the Focus for a Tesla.', 2],
    ['The user has taken Portuguese lessons since September 2025.', 1],
    ['The user bought a Kia Niro in 2025.', 1],
    ['Robin worked at Acme until March 2024.', -1],
    ['I used to play rugby.', -1],
    ["The user's GP was Dr Patel.", -1],
    ['Before Northwind, the user worked at Sage.', -1],
    ['I lived in Cardiff for six years.', -1],
    ['A few years ago I took evening classes in Spanish.', -1],
    ["The user's daughter is two months old.", 0],
    ['The user was born in 1990 in Swansea.', 0],
    ['The user is most productive before lunch.', 0],
    ['The user does not want any more pets.', 0],
    ['The user moved the meeting.', 0],
    ["The user's dentist is Dr Kaur.", 0],
    ['The user was registered with Dr. Patel until 2024.', -1],
    ['Sam: How was your trip to Lisbon? I sold my old car to a neighbour.', 0],
  ] as const)('%s → %d', (text, mark) => {
    expect(timeMark(text)).toBe(mark);
  });

  it.each([
    ['Where did I work before?', 'past'],
    ['Which gym did the user use to go to?', 'past'],
    ["Who was the user's old boss?", 'past'],
    ['Did the user ever smoke?', 'past'],
    ['Who was I going out with a few years ago?', 'past'],
    ['Where do I work now?', 'present'],
    ['Where does the user work?', 'present'],
    ['How old is the user?', 'present'],
    ['What does my old flatmate do now?', 'present'],
    // "current" names the later job; "before" says when.
    ['Where did the user work before his current job?', 'past'],
    ["What is the user's current job?", 'present'],
    ['What was my cholesterol?', 'either'],
    ['When did the user get married?', 'either'],
  ] as const)('%s → %s', (question, time) => {
    expect(questionTime(question)).toBe(time);
  });
});

describe('orderByTime', () => {
  const acme = stored(1, 'The user worked at Acme until 2024.', 400);
  const globex = stored(2, 'The user now works at Globex.', 100);
  const other = stored(3, 'The user works from home on Wednesdays.', 50);

  it('puts what holds now first, unless the question asks about the past, and the version it passes right after it', () => {
    const results = [acme, other, globex];
    const similar = similarities([[0, 2, 0.55]]);
    // The passed version goes down one place, not to where the other was: if the time was misjudged, the right
    // answer is still next.
    expect(ids(orderByTime('Where does the user work now?', results, similar))).toEqual([2, 1, 3]);
    expect(ids(orderByTime('Where did the user work before?', [globex, other, acme], similar))).toEqual([1, 2, 3]);
    // Already in order: nothing moves.
    expect(ids(orderByTime('Where did the user work before?', results, similar))).toEqual([1, 3, 2]);
  });

  it('asked about the past, moves a text marked past up only when it answers nearly as well as the one it passes', () => {
    const club = stored(12, 'My running club is Leith Harriers.', 100, 100, 0.9);
    const rugby = stored(13, 'I used to play rugby at uni.', 10, 10, 0.5);
    const similar = similarities([[0, 1, 0.47]]);
    expect(ids(orderByTime('Which running club was I in before?', [club, rugby], similar))).toEqual([12, 13]);
    const closeRugby = stored(13, 'I used to play rugby at uni.', 10, 10, 0.8);
    expect(ids(orderByTime('Which running club was I in before?', [club, closeRugby], similar))).toEqual([13, 12]);
    // Asked about now, what holds now still goes up however far below it ranked.
    const now = stored(14, 'I run with the Portobello Runners now.', 10, 10, 0.2);
    expect(ids(orderByTime('Which running club am I in?', [rugby, now], similarities([[0, 1, 0.6]])))).toEqual([14, 13]);
  });

  it('asked what came before a name, puts a result naming it after one about the same matter that does not', () => {
    const japanese = stored(50, 'Tomasz is learning Japanese with a tutor on Wednesday evenings.', 10, 10, 0.9);
    const spanish = stored(51, 'Back when Maisie was in P3, I was taking evening classes in Spanish.', 5, 5, 0.4);
    const similar = similarities([[0, 1, 0.5]]);
    expect(ids(orderByTime('Which language did I study before Japanese?', [japanese, spanish], similar))).toEqual([51, 50]);
    // A title is not the name: "before Dr Varma" is before Varma.
    const varma = stored(52, "Marcus's doctor is Dr. Priya Varma.", 10, 10, 0.9);
    const hollis = stored(53, "Marcus's primary care doctor is Dr. Alan Hollis at Providence.", 300, 300, 0.5);
    expect(ids(orderByTime("Who was Marcus's doctor before Dr. Varma?", [varma, hollis], similar))).toEqual([53, 52]);
    // Not asked about before it, about another matter, or a result about the time before it: left alone.
    expect(ids(orderByTime('Which language is Tomasz learning with Japanese?', [japanese, spanish], similar))).toEqual([50, 51]);
    expect(ids(orderByTime('Which language did I study before Japanese?', [japanese, spanish], similarities([[0, 1, 0.2]])))).toEqual([50, 51]);
    // A result that does not say it held before must be nearer to pass it: "The user's NHS number is …" (0.37) is not.
    const nhs = stored(56, "The user's NHS number is 485 777 3456.", 20, 20, 0.5);
    expect(ids(orderByTime('Which language did I study before Japanese?', [japanese, nhs], similarities([[0, 1, 0.37]])))).toEqual([50, 56]);
    // The whole name: "before Zoë" does not name "Zoé".
    const zoe = stored(57, 'Zoé teaches the user French.', 10, 10, 0.9);
    const piano = stored(58, 'I used to have piano lessons with Mr Kerr.', 300, 300, 0.4);
    expect(ids(orderByTime('Who was my piano teacher before Zoë?', [zoe, piano], similarities([[0, 1, 0.5]])))).toEqual([57, 58]);
    const painted = stored(54, 'Before Christmas I painted the hallway, and at Christmas we hosted my parents.', 40, 40, 0.9);
    const fence = stored(55, 'I fixed the fence in the autumn.', 50, 50, 0.5);
    expect(ids(orderByTime('What did I do before Christmas?', [painted, fence], similar))).toEqual([54, 55]);
  });

  it('leaves results about other matters where they are, and a question in the past tense naming no time alone', () => {
    // Marked differently but not alike: not two versions of one fact.
    expect(ids(orderByTime('Where does the user work?', [acme, other, globex], similarities([])))).toEqual([1, 3, 2]);
    // Vectors that cannot be compared (another model, during a re-embedding): never the same matter.
    expect(ids(orderByTime('Where does the user work?', [acme, other, globex], () => null))).toEqual([1, 3, 2]);
    expect(ids(orderByTime('Where did the user work?', [acme, other, globex], similarities([[0, 2, 0.55]])))).toEqual([1, 3, 2]);
    // Saying when it started is no change: it needs a closer likeness to count as a newer version.
    const teacher = stored(8, "Theo's teacher this year is Mr Bell.", 10);
    const violin = stored(9, 'Theo is 9 and plays the violin.', 100);
    expect(ids(orderByTime('How old is Theo?', [violin, teacher], similarities([[0, 1, 0.54]])))).toEqual([9, 8]);
    expect(ids(orderByTime('How old is Theo?', [violin, teacher], similarities([[0, 1, 0.65]])))).toEqual([8, 9]);
  });

  it('asked "now" in so many words, lets a text saying when it started pass an unmarked one at a lower likeness', () => {
    const skoda = stored(15, 'The user drives a blue Skoda Octavia estate.', 400);
    const kia = stored(16, 'The user bought a Kia Niro EV in 2025.', 100);
    const similar = similarities([[0, 1, 0.52]]);
    expect(ids(orderByTime('What car does the user drive now?', [skoda, kia], similar))).toEqual([16, 15]);
    // A present-tense question that does not say "now" keeps the higher floor, and so does a lower likeness.
    expect(ids(orderByTime('What car does the user drive?', [skoda, kia], similar))).toEqual([15, 16]);
    expect(ids(orderByTime('What car does the user drive now?', [skoda, kia], similarities([[0, 1, 0.45]])))).toEqual([15, 16]);
    // A text saying it changed ("these days") claims the present at least as plainly as one saying when it started.
    const pixel = stored(17, 'My phone is a Google Pixel 6.', 400);
    const iphone = stored(18, 'These days the user carries an iPhone 15 Pro.', 100);
    expect(ids(orderByTime('What phone do I have at the moment?', [pixel, iphone], similarities([[0, 1, 0.54]])))).toEqual([18, 17]);
    expect(ids(orderByTime('What phone do I have?', [pixel, iphone], similarities([[0, 1, 0.54]])))).toEqual([17, 18]);
  });

  it('orders two alike versions that mark no time by when each was last known to hold', () => {
    const kaur = stored(4, "The user's dentist is Dr Kaur.", 300);
    const byrne = stored(5, "The user's dentist is Dr Byrne.", 30);
    const similar = similarities([[0, 1, 0.86]]);
    expect(ids(orderByTime("Who is the user's dentist?", [kaur, byrne], similar))).toEqual([5, 4]);
    expect(ids(orderByTime("Who was the user's previous dentist?", [byrne, kaur], similar))).toEqual([4, 5]);
    // Confirmed since: the older memory is the one known to hold now.
    const confirmed = stored(4, "The user's dentist is Dr Kaur.", 300, 1);
    expect(ids(orderByTime("Who is the user's dentist?", [byrne, confirmed], similar))).toEqual([4, 5]);
    // Less alike than two answers of one question, or not in the same words: left alone.
    expect(ids(orderByTime("Who is the user's dentist?", [kaur, byrne], similarities([[0, 1, 0.4]])))).toEqual([4, 5]);
    const rent = stored(10, 'The user pays £1,150 a month in rent.', 300);
    const saving = stored(11, 'The user is saving £400 a month towards a house deposit.', 30);
    expect(ids(orderByTime('How much rent does the user pay?', [rent, saving], similarities([[0, 1, 0.8]])))).toEqual([10, 11]);
  });

  it('puts two answers saying the same thing of the same one in time order, the latest first unless asked about the past', () => {
    const skoda = stored(30, 'Tomasz drives a red Skoda Octavia estate.', 400);
    const hyundai = stored(31, 'I drive a grey Hyundai Ioniq 5.', 30);
    const similar = similarities([[0, 1, 0.51]]);
    // Tomasz is the user: his name and "I" say it of the same one.
    expect(ids(orderByTime('What car does Tomasz drive?', [skoda, hyundai], similar, ['tomasz']))).toEqual([31, 30]);
    expect(ids(orderByTime('What car does the user drive?', [skoda, hyundai], similar, ['tomasz']))).toEqual([31, 30]);
    // Not known to be the user: two people, each with a car.
    expect(ids(orderByTime('What car does Tomasz drive?', [skoda, hyundai], similar))).toEqual([30, 31]);
    // Asked about the past: the earlier one first.
    expect(ids(orderByTime('What car did Tomasz drive before?', [hyundai, skoda], similar, ['tomasz']))).toEqual([30, 31]);
    // Less alike: left alone.
    expect(ids(orderByTime('What car does Tomasz drive?', [skoda, hyundai], similarities([[0, 1, 0.4]]), ['tomasz']))).toEqual([30, 31]);
    // What the question asks about, of the same one: "My usual run" and "the user's run".
    const park = stored(32, 'My usual run is 5 km around Victoria Park.', 400);
    const glen = stored(33, "The user's usual run is a 15 km loop through Rouken Glen.", 30);
    expect(ids(orderByTime('How far do I usually run?', [park, glen], similarities([[0, 1, 0.52]])))).toEqual([33, 32]);
    // A day's name inside the phrase says which run; the phrase goes on to "run".
    const sunday = stored(34, "The user's regular Sunday run is a 15 km loop through Rouken Glen.", 30);
    expect(ids(orderByTime('How far do I usually run?', [park, sunday], similarities([[0, 1, 0.52]])))).toEqual([34, 32]);
  });

  it('orders two rival answers, one saying when it started and one marking no time, by when each was last known to hold', () => {
    // "since school" says when a friendship began, not that it is the current answer: the one told last is.
    const hamish = stored(35, "Oskar's best friend is Hamish Kerr, whom he has known since school.", 400);
    const tariq = stored(36, "Oskar's best friend is Tariq Aziz.", 30);
    const similar = similarities([[0, 1, 0.7]]);
    expect(ids(orderByTime("Who is Oskar's best friend?", [hamish, tariq], similar))).toEqual([36, 35]);
    expect(ids(orderByTime("Who used to be Oskar's best friend?", [tariq, hamish], similar))).toEqual([35, 36]);
    // Told the other way round, the one saying when it started is the later.
    const hamishLater = stored(35, "Oskar's best friend is Hamish Kerr, whom he has known since school.", 30);
    const tariqEarlier = stored(36, "Oskar's best friend is Tariq Aziz.", 400);
    expect(ids(orderByTime("Who is Oskar's best friend?", [tariqEarlier, hamishLater], similar))).toEqual([35, 36]);
    // Not rival answers (another slot): the mark still decides, as for any two results about the same matter.
    const skoda = stored(37, 'The user drives a blue Skoda Octavia estate.', 30);
    const kia = stored(38, 'The user bought a Kia Niro EV in 2025.', 400);
    expect(ids(orderByTime('What car does the user drive now?', [skoda, kia], similarities([[0, 1, 0.62]])))).toEqual([38, 37]);
  });

  it('takes neither another thing said of the same one nor the same thing said of another for a rival answer', () => {
    const similar = similarities([[0, 1, 0.6]]);
    // Another verb: "works" is not "bikes".
    const hours = stored(40, 'Marcus works 7:30 a.m. to 4 p.m. on weekdays.', 400);
    const bike = stored(41, 'Marcus bikes to work most days.', 30);
    expect(ids(orderByTime('What are my work hours?', [hours, bike], similar, ['marcus']))).toEqual([40, 41]);
    // A verb that says little without its object: "takes sertraline", "takes oat milk".
    const sertraline = stored(42, 'The user takes 50 mg of sertraline every morning.', 400);
    const milk = stored(43, 'The user takes oat milk in their coffee.', 30);
    expect(ids(orderByTime('What does the user take every morning?', [sertraline, milk], similar))).toEqual([42, 43]);
    // Someone else's: the user's mother is not Sam's, the user's team stand-up not their quiz team.
    const mother = stored(44, "The user's mother, Brigid, lives in Galway.", 400);
    const sams = stored(45, "Sam's mother is called Ruth and lives in Harrogate.", 30);
    expect(ids(orderByTime("Where does the user's mother live?", [mother, sams], similar))).toEqual([44, 45]);
    const standUp = stored(46, "The user's team stand-up is at 9:30 every weekday.", 400);
    const quiz = stored(47, "The user's pub quiz team is called Quiz Akabusi.", 30);
    expect(ids(orderByTime("What time is the user's team meeting?", [standUp, quiz], similar))).toEqual([46, 47]);
  });

  it('puts two facts whose subject no slot reads in time order when both use a word of the question and each names its own', () => {
    const xfinity = stored(50, 'Home internet is Xfinity on the 400 Mbps plan.', 400);
    const ziply = stored(51, 'The house has Ziply Fiber gigabit internet.', 30);
    const similar = similarities([[0, 1, 0.6]]);
    expect(ids(orderByTime('Who provides our home internet?', [xfinity, ziply], similar))).toEqual([51, 50]);
    expect(ids(orderByTime('Who provided our home internet before?', [ziply, xfinity], similar))).toEqual([50, 51]);
    // Less alike: left alone.
    expect(ids(orderByTime('Who provides our home internet?', [xfinity, ziply], similarities([[0, 1, 0.5]])))).toEqual([50, 51]);
    // No word of the question in either: nothing says they answer the same thing.
    expect(ids(orderByTime('Who is our broadband provider?', [xfinity, ziply], similar))).toEqual([50, 51]);
    // One names nothing the other does not: the same answer with a detail, not another.
    const plain = stored(52, 'Home internet is Xfinity.', 30);
    expect(ids(orderByTime('Who provides our home internet?', [xfinity, plain], similar))).toEqual([50, 52]);
    // A conversation's turn says several things: none of them is known to be the answer.
    const turn = stored(53, 'The house has Ziply Fiber internet. The engineer came on Friday.', 30);
    expect(ids(orderByTime('Who provides our home internet?', [xfinity, turn], similar))).toEqual([50, 53]);
  });

  it('takes a count in words and in digits for one value, not two versions', () => {
    const words = stored(20, 'The user is on call one week in six.', 300);
    const digits = stored(21, 'The user is on call one week in 6.', 30);
    const other = stored(22, 'The user is on call one week in three.', 10);
    const similar = similarities([[0, 1, 0.98], [0, 2, 0.96], [1, 2, 0.98]]);
    expect(ids(orderByTime('How often is the user on call?', [words, digits], similar))).toEqual([20, 21]);
    expect(ids(orderByTime('How often is the user on call?', [words, other], similar))).toEqual([22, 20]);
  });

  it('leaves two versions in their places when the question names what tells them apart', () => {
    const kaur = stored(8, "The user's dentist is Dr Kaur on Gloucester Road.", 300);
    const byrne = stored(9, "The user's dentist is Dr Byrne at Easton Dental.", 10);
    expect(ids(orderByTime('Where does Dr Kaur work?', [kaur, byrne], similarities([[0, 1, 0.86]])))).toEqual([8, 9]);
    expect(ids(orderByTime("Who is the user's dentist?", [kaur, byrne], similarities([[0, 1, 0.86]])))).toEqual([9, 8]);
  });

  it('prefers the later year two alike versions name over when they were stored', () => {
    const older = stored(6, "The user's 10k best is 47:30, set in 2025.", 300);
    const newer = stored(7, "The user's 10k best is 52 minutes, set in 2022.", 10);
    expect(ids(orderByTime("What is the user's 10k best?", [newer, older], similarities([[0, 1, 0.75]])))).toEqual([6, 7]);
  });
});

describe('laterVersionOf', () => {
  const nurse = { id: 1, text: 'I work as a nurse at the Royal Infirmary.' };
  const teacher = { id: 7, text: 'I left nursing last year and now teach biology at a secondary school.' };
  const manager = { id: 8, text: 'Fiona left, and my manager is now Raj.' };
  const started = { id: 9, text: 'I started teaching biology at a secondary school.' };
  const likeness = new Map([
    ['1-7', 0.6],
    ['1-8', 0.3],
    ['1-9', 0.7],
  ]);
  const similarity = (a: { id: number }, b: { id: number }) => likeness.get(`${Math.min(a.id, b.id)}-${Math.max(a.id, b.id)}`) ?? null;

  it('finds, below the window, a text saying it changed about the same matter as an unmarked first result, asked about the present', () => {
    expect(laterVersionOf('What is my job?', nurse, [manager, teacher], similarity)).toBe(teacher);
    expect(laterVersionOf('What is my job now?', nurse, [teacher], similarity)).toBe(teacher);
  });

  it('finds none asked about the past, for a first result that marks a time, about another matter, or only saying when it started', () => {
    expect(laterVersionOf('What did I do for work before?', nurse, [teacher], similarity)).toBeUndefined();
    expect(laterVersionOf('What is my job?', teacher, [nurse], similarity)).toBeUndefined();
    expect(laterVersionOf('What is my job?', nurse, [manager], similarity)).toBeUndefined();
    expect(laterVersionOf('What is my job?', nurse, [started], similarity)).toBeUndefined();
  });
});

describe('spreadNearCopies', () => {
  const text = (value: string) => ({ text: value });

  it('moves a near-copy of a better result after the others of the window', () => {
    const results = [text('Ivy is allergic to eggs.'), text('Ivy has an egg allergy.'), text('Ivy goes to Sunflowers nursery.'), text('Oscar is seven.')];
    expect(spreadNearCopies(results, similarities([[0, 1, 0.91]]))).toEqual([results[0], results[2], results[3], results[1]]);
    const home = [text('The user works from home every Wednesday.'), text('The user works from home on Wednesdays.'), text('Other.')];
    expect(spreadNearCopies(home, similarities([[0, 1, 0.97]]))).toEqual([home[0], home[2], home[1]]);
    expect(spreadNearCopies(results, () => null)).toEqual(results);
    // Not alike enough: nothing moves.
    expect(spreadNearCopies(results, similarities([[0, 1, 0.8]]))).toEqual(results);
  });

  it('keeps alike results apart when one names what the other does not, or when they are versions in time', () => {
    const dentists = [text("The user's dentist is Dr Kaur on Gloucester Road."), text("The user's dentist is Dr Byrne at Easton Dental."), text('Other.')];
    expect(spreadNearCopies(dentists, similarities([[0, 1, 0.86]]))).toEqual(dentists);
    const rent = [text('The rent is £1,100.'), text('The rent costs £1,100.'), text('Other.')];
    expect(spreadNearCopies(rent, similarities([[0, 1, 0.9]]), () => true)).toEqual(rent);
    expect(spreadNearCopies(rent, similarities([[0, 1, 0.9]]))).toEqual([rent[0], rent[2], rent[1]]);
  });

  it('keeps a result that adds something in its place, however alike: only the same fact told again moves', () => {
    const allergies = [text('The user is allergic to penicillin since 2019.'), text('The user is allergic to penicillin and amoxicillin.'), text('The user drinks oat milk.')];
    expect(spreadNearCopies(allergies, similarities([[0, 1, 0.93]]))).toEqual(allergies);
  });

  it('compares texts of several sentences (conversation turns) by their words, not by their likeness alone', () => {
    const turns = [
      text('Melanie: Last Fri I took my kids to a pottery workshop. We all made our own pots, it was fun!'),
      text('Melanie: The kids loved it! They were so excited to make something with clay.'),
      text('Other.'),
    ];
    // As alike as a fact told twice, but the second turn says what the first does not: both keep their places.
    expect(spreadNearCopies(turns, similarities([[0, 1, 0.88]]))).toEqual(turns);
    // One sentence against a turn: the same.
    const mixed = [turns[0]!, text('Melanie: The kids made their own pots at a workshop.'), text('Other.')];
    expect(spreadNearCopies(mixed, similarities([[0, 1, 0.9]]))).toEqual(mixed);
    // A turn told again word for word is still a copy.
    const again = [turns[0]!, text('Melanie: Last Fri I took my kids to a pottery workshop. We all made our own pots, it was fun!'), text('Other.')];
    expect(spreadNearCopies(again, similarities([[0, 1, 0.99]]))).toEqual([again[0], again[2], again[1]]);
  });
});

describe('withBridgedAnswer', () => {
  const ranked = [11, 12, 13, 14, 15, 16, 17, 18].map((id, position) => ({ id, score: 1 - position / 10 }));
  const ids = (items: readonly { id: number }[]) => items.map((item) => item.id);

  it('moves the bridge\'s best new answer up to its place, the scores staying with the places', () => {
    // 11 is where the name came from (already first); 18, the next hit, was ranked eighth.
    const moved = withBridgedAnswer(ranked, [11, 18, 14]);
    expect(BRIDGED_ANSWER_PLACE).toBe(2);
    expect(ids(moved)).toEqual([11, 12, 18, 13, 14, 15, 16, 17]);
    expect(moved.map((item) => item.score)).toEqual(ranked.map((item) => item.score));
  });

  it('leaves the ranking as it is when the answer is already among the first, or is not ranked at all', () => {
    expect(ids(withBridgedAnswer(ranked, [12, 13]))).toEqual(ids(ranked));
    expect(ids(withBridgedAnswer(ranked, [99]))).toEqual(ids(ranked));
    expect(ids(withBridgedAnswer(ranked, []))).toEqual(ids(ranked));
  });
});
