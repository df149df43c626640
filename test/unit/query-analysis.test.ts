import { describe, expect, it } from 'vitest';
import { alternativeWords, asksAboutRole, bridgeNames, contentWords, personWords, questionToEmbed, referredNames, referringClause } from '../../src/memory/query-analysis.js';

describe('contentWords', () => {
  it.each([
    ['What time is my stand-up?', /^What is my stand-up\?/],
    ['How many steps does the user walk?', /^How steps does\s+walk\?/],
    ['What kind of tea does the user like?', /^What tea does\s+like\?/],
    ['What is the name of the user’s dog?', /^What is the\s+dog\?/],
    ['Which day of the week is bin day?', /^Which is bin day\?/],
    ['What would the user like me to call them?', /^What\s+like me to call them\?/],
  ])('drops answer-type words and modal verbs: %j', (query, expected) => {
    expect(contentWords(query)).toMatch(expected);
  });

  it('adds the other written forms of dates, numbers and irregular verbs', () => {
    expect(contentWords('What is on the 3rd of March?').split(' ')).toContain('3');
    expect(contentWords('What is on 21 June?').split(' ')).toEqual(expect.arrayContaining(['21st']));
    expect(contentWords('Does the user have two cats?').split(' ')).toContain('2');
    expect(contentWords('Who was third?').split(' ')).toEqual(expect.arrayContaining(['3', '3rd']));
    expect(contentWords('What happens in Sept?').split(' ')).toContain('september');
    expect(contentWords('When did Caroline go to the support group?').split(' ')).toEqual(expect.arrayContaining(['went', 'gone']));
    expect(contentWords('Who bought the car?').split(' ')).toContain('buy');
  });

  it('gives a title the word it shortens, each way, and a kinship word its other common words', () => {
    expect(alternativeWords('Who is the user’s doctor?')).toEqual(['dr']);
    expect(alternativeWords('When did I see Dr Patel?')).toEqual(['doctor']);
    expect(alternativeWords('Who was my professor?')).toEqual(['prof']);
    expect(alternativeWords('What did my dad do for a living?')).toEqual(['father', 'daddy']);
    // Not a hyphenated form ("step-father" would be searched as "father"), nor a rare one ("papa").
    expect(alternativeWords("What's my stepfather's hobby?")).toEqual(['stepdad']);
    expect(alternativeWords('Who is my dentist?')).toEqual([]);
  });

  it('leaves out the words that say a question is about the present, and keeps those that place it in the past', () => {
    const words = (query: string) => contentWords(query).split(/[\s?]+/);
    expect(words('How does the user keep fit these days?')).not.toEqual(expect.arrayContaining(['these']));
    expect(words('How does the user keep fit these days?')).toContain('fit');
    expect(words('Where does Robin work now?')).not.toContain('now');
    expect(words('What is John currently doing as a volunteer?')).not.toContain('currently');
    expect(words('Where did the user work before?')).not.toContain('before');
    // "My old boss" is a past one (the time is read elsewhere): "old" would find "a five-year-old tabby".
    expect(words("Who was the user's old boss?")).not.toContain('old');
    expect(words('Where does my former flatmate live?')).not.toContain('former');
    // So is "his current job" the present one: "current" would find "Tomasz's current account".
    expect(words('Where did Tomasz work before his current job?')).not.toContain('current');
    expect(words('Which current affairs podcast does the user like?')).toContain('current');
    expect(words('How old is the old oak in the garden?')).toContain('oak');
    expect(words('What did the user do with the old piano?')).toContain('old');
    // "The user" is whom every memory is about, as "my" is: not searched ("The user's sister is Lucia" is no answer
    // to "Has the user ever had surgery?").
    expect(words('Has the user ever had surgery?')).not.toContain('user');
    expect(words("What brand is the user's guitar?")).not.toContain("user's");
    expect(words("What brand is the user's guitar?")).toContain('guitar');
    // "For a living" asks for an occupation: "living" would search "lives in Leeds".
    expect(words("What does the user's significant other do for a living?")).not.toContain('living');
    expect(words('Where is the living room?')).toContain('living');
    // A memory of that time tends to say these words; "use to" can also mean a tool ("does Nate use to play").
    expect(contentWords('What hobby did Evan start a few years ago?')).toContain('a few years ago');
    expect(contentWords('What did the user used to drink?')).toContain('used to');
    expect(contentWords('What mediums does Nate use to play games?')).toContain('use to play');
  });

  it('keeps May before a number as a month and leaves questions without such words alone', () => {
    expect(contentWords('What happened in May 2023?')).toBe('What happened in May 2023?');
    expect(contentWords('Where does Sam live?')).toBe('Where does Sam live?');
  });
});

describe('bridgeNames', () => {
  it('takes the names written right after the role word the question asks about', () => {
    expect(bridgeNames("Who teaches the user's son?", ["The user's son Theo is 9 and plays the violin.", "The user's daughter Maya starts school."])).toEqual(['Theo']);
    expect(bridgeNames('What does my partner do?', ["The user's partner is Sam, a chemistry teacher."])).toEqual(['Sam']);
    expect(bridgeNames("Where does my mum live?", ["The user's mother, Brigid, lives in Galway."])).toEqual(['Brigid']);
    expect(bridgeNames("Who is the user's landlord?", ["The user's landlord is Mr Hughes."])).toEqual(['Mr', 'Hughes']);
    expect(bridgeNames('Who are my brothers?', ['The user has not spoken to their brother Ciarán since 2022.'])).toEqual(['Ciarán']);
  });

  it('takes the names written after a kind of the general role asked about', () => {
    const texts = ['The user has a son, Oscar, who is seven.', "The user's daughter Ivy is 3."];
    expect(bridgeNames("What health problems do the user's children have?", texts)).toEqual(['Oscar', 'Ivy']);
    expect(bridgeNames("Who is the user's spouse?", ["The user's husband Tom is a chef."])).toEqual(['Tom']);
    // A kind is not its general role: asked about a son, a daughter's name is not taken.
    expect(bridgeNames("Who is the user's son?", texts)).toEqual(['Oscar']);
  });

  it("takes the names of a sentence's subject when it says the subject is the role asked about", () => {
    expect(bridgeNames("What does my cousin's mother do?", ["Val's daughter Lottie is the user's favourite cousin."])).toEqual(['Val', 'Lottie']);
    expect(bridgeNames('Who is my mentor?', ['Sunita from the data team is my mentor.'])).toEqual(['Sunita']);
    // Someone's role with more said after it: the role is the owner's noun, first after the owners chained to it.
    expect(bridgeNames("What kind of business does Marcus's cousin run?", ["Rafael is Marcus's cousin on his mother's side."])).toEqual(['Rafael']);
    expect(bridgeNames("What does Marcus's cousin do?", ["Rafael is Marcus's older cousin and lives in Texas."])).toEqual(['Rafael']);
    // Not when the role word is not what the sentence says the subject is.
    expect(bridgeNames("What does my cousin's mother do?", ["Val's daughter Lottie has a cousin in Leeds."])).toEqual([]);
    expect(bridgeNames("What does the user's brother do?", ['Sam is my friend from school, and his brother is a vet.'])).toEqual([]);
    expect(bridgeNames("What does the user's brother do?", ['Sam is a brother of the bride.'])).toEqual([]);
    expect(bridgeNames("What does the user's cousin do?", ["Rafael is Marcus's neighbour's cousin's friend."])).toEqual([]);
  });

  it('finds nothing without a role word, for another role, or for a name the question already gives', () => {
    expect(bridgeNames('Where does the user work?', ["The user's son Theo is 9."])).toEqual([]);
    expect(bridgeNames("Who teaches the user's daughter?", ["The user's son Theo is 9."])).toEqual([]);
    expect(bridgeNames("Who teaches the user's son Theo?", ["The user's son Theo is 9."])).toEqual([]);
    // A possessive role word is not followed by that person's name ("son's school Hillcrest").
    expect(bridgeNames("Where does the user's son go to school?", ["The user's son's school is Hillcrest."])).toEqual([]);
    expect(bridgeNames("Who is the user's son?", ['The son is 9. The user thinks so.'])).toEqual([]);
  });

  it('says whether a question asks about someone by role', () => {
    expect(asksAboutRole("Who teaches the user's son?")).toBe(true);
    expect(asksAboutRole("What is my grandma's name?")).toBe(true);
    expect(asksAboutRole('Where does the user live?')).toBe(false);
  });
});

describe('referredNames', () => {
  it('finds the later clause that refers back to someone by a singular pronoun', () => {
    expect(referringClause("Who is Leon's sister, and who is she married to?")).toBe(', and who is she married to?');
    expect(referringClause('Who mentors the user at work, and how long has she been at the company?')).toBe(', and how long has she been at the company?');
    // "they" is most often the user; a single clause refers back to nothing.
    expect(referringClause('How much has the user saved, and how much rent do they pay?')).toBeUndefined();
    expect(referringClause('Who is she?')).toBeUndefined();
    expect(referringClause('Which shirts and ties does he own?')).toBeUndefined();
  });

  it('takes the names the best text gives that the question does not', () => {
    const asked = "Who is Leon's sister, and who is she married to?";
    expect(referredNames(asked, ["Leon's sister Beatriz is a nurse in Lisbon.", 'Rui teaches maths.'])).toEqual(['Beatriz', 'Lisbon']);
    // The first text naming nobody new gives way to the next.
    expect(referredNames(asked, ['Leon is a chef.', 'Beatriz is a nurse.'])).toEqual(['Beatriz']);
    expect(referredNames("Who is Leon's sister?", ["Leon's sister Beatriz is a nurse in Lisbon."])).toEqual([]);
  });

  it('takes the person the first clause names when it asks no role of them', () => {
    const texts = ['Elsa has swimming lessons on Wednesdays at 5pm at Pentwyn Leisure Centre.'];
    expect(referredNames("What day is Elsa's swimming lesson, and what is she allergic to?", texts)).toEqual(['Elsa']);
    expect(referredNames('Where does Marcus work on Mondays, and what is his salary?', ['Marcus works at Cascadia Rail.'])).toEqual(['Marcus']);
  });
});

describe('personWords', () => {
  it('gives the other words facts use for the person asked about', () => {
    expect(personWords("Who is the user's spouse?")).toEqual({ asked: ['spouse'], searched: ['partner', 'husband', 'wife'] });
    expect(personWords('Where does my mum live?').searched).toEqual(['mother', 'mom', 'parent']);
    expect(personWords('Which relative has the user not talked to in years?').searched).toEqual(expect.arrayContaining(['brother', 'aunt', 'cousin']));
    expect(personWords("Where is the user's closest mate based?").searched).toEqual(['friend', 'pal', 'buddy', 'bestie']);
    // A manager is as often said the other way round: "Marcus reports to Derek Ames".
    expect(personWords("What's my boss's name?").searched).toEqual(['manager', 'supervisor', 'reports']);
  });

  it('reads a relative by marriage as a partner\'s relative or a relative\'s partner, and a step-parent as a parent\'s partner', () => {
    expect(personWords('What does my father-in-law do?')).toEqual({
      asked: ['father-in-law'],
      searched: ['in-laws', 'father', 'dad', 'parent', 'partner', 'spouse', 'husband', 'wife'],
    });
    expect(personWords("Where do the user's parents-in-law live?").searched).toEqual(expect.arrayContaining(['in-laws', 'mother', 'father', 'partner']));
    expect(personWords('When is my sister-in-law due?').searched).toEqual(expect.arrayContaining(['sister', 'brother', 'partner', 'wife']));
    expect(personWords("Who is the user's stepdad?")).toEqual({ asked: ['stepdad'], searched: ['stepfather', 'mother', 'mum', 'partner', 'husband'] });
  });

  it('reads a relative two steps away by the steps: a niece is a sibling\'s daughter, an aunt a parent\'s sister', () => {
    expect(personWords('What are my nieces called?')).toEqual({ asked: ['nieces'], searched: ['brother', 'sister', 'sibling', 'daughter'] });
    expect(personWords("How old is the user's nephew?").searched).toEqual(['brother', 'sister', 'sibling', 'son']);
    expect(personWords('What does my aunt do?').searched).toEqual(expect.arrayContaining(['mother', 'father', 'sister']));
    expect(personWords('What does my aunt do?').searched).not.toContain('brother');
    expect(personWords("Who is the user's favourite cousin?").searched).toEqual(['aunt', 'uncle']);
    expect(personWords('Where do my grandchildren live?').searched).toEqual(expect.arrayContaining(['grandson', 'son', 'daughter']));
  });

  it('keeps kinds apart: a son is a child, never a daughter', () => {
    expect(personWords("What is my son's name?").searched).toEqual(['child', 'kid']);
    expect(personWords('Who are my brothers?').searched).toEqual(['sibling']);
  });

  it('knows a person by any variant of their role, singular or plural', () => {
    expect(personWords("When do the user's mums visit?")).toEqual({ asked: ['mums'], searched: ['mother', 'mom', 'parent'] });
    expect(personWords('What did my grandad say?').searched).toEqual(['grandfather', 'grandpa', 'granddad']);
    expect(personWords('Who are my buddies?').searched).toEqual(['friend', 'mate', 'pal', 'buddy', 'bestie']);
    expect(personWords('Which of my co-workers cycles?').searched).toEqual(['colleague', 'coworker', 'teammate']);
  });

  it('reads phrases with no word of their own, and leaves "family" as a modifier alone', () => {
    expect(personWords("What does the user's significant other do?")).toEqual({ asked: [], searched: ['partner', 'spouse', 'husband', 'wife'] });
    expect(personWords('Which family member lives abroad?').searched).toEqual(expect.arrayContaining(['sister', 'uncle']));
    expect(personWords("Who's my family doctor?")).toEqual({ asked: [], searched: [] });
    expect(personWords('Where does the user work?')).toEqual({ asked: [], searched: [] });
  });
});

describe('questionToEmbed', () => {
  it('embeds the question with a pronoun for the user, keeping whose and who', () => {
    expect(questionToEmbed("Who was the user's first wife?")).toBe('Who was their first wife?');
    expect(questionToEmbed('Where does The User work now, and who is their manager?')).toBe('Where does they work now, and who is their manager?');
    expect(questionToEmbed('What did the user’s users say?')).toBe("What did their users say?");
    expect(questionToEmbed('What does Marcus drive?')).toBe('What does Marcus drive?');
  });
});
