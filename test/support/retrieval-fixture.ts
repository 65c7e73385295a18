/**
 * A retrieval fixture for ranked recall: messages of one user across sessions (the evidence),
 * filler chatter that shares their words (the distractors), and questions in natural language,
 * each with the ids of the messages that hold its answer. English and Chinese. Questions are
 * phrased as a user would ask them later, not copied from the messages (other inflections,
 * other word order, question words), which is where a substring scan finds nothing.
 */
export interface FixtureMessage {
  id: string;
  session: string;
  text: string;
}

export interface FixtureQuestion {
  question: string;
  evidence: string[];
  lang: 'en' | 'zh';
}

export const EVIDENCE: FixtureMessage[] = [
  { id: 'e1', session: 'travel', text: 'I booked the ferry from Piraeus to Hydra for June 14th, departing at 8:30.' },
  { id: 'e2', session: 'travel', text: 'My passport expires in September, so I need to renew it before the Lisbon trip.' },
  { id: 'e3', session: 'travel', text: 'The hotel in Kyoto is the Ryokan Shimizu, two nights, breakfast included.' },
  { id: 'e4', session: 'health', text: 'The dentist moved my appointment to Thursday at 3pm.' },
  { id: 'e5', session: 'health', text: 'I am allergic to penicillin; amoxicillin gave me hives last year.' },
  { id: 'e6', session: 'health', text: 'Running plan: 5 km on Mondays and Wednesdays, a long run of 15 km on Sundays.' },
  { id: 'e7', session: 'work', text: 'The quarterly budget review with finance is scheduled for Friday morning.' },
  { id: 'e8', session: 'work', text: 'Our staging database password rotates every 30 days; the vault path is ops/staging/db.' },
  { id: 'e9', session: 'work', text: 'Maria is leading the migration to Postgres 16; the cutover is planned for March.' },
  { id: 'e10', session: 'work', text: 'I promised to send the onboarding slides to the two new interns by Wednesday.' },
  { id: 'e11', session: 'home', text: 'The spare key is hidden under the blue flowerpot by the back door.' },
  { id: 'e12', session: 'home', text: 'The plumber said the water heater is twelve years old and should be replaced soon.' },
  { id: 'e13', session: 'home', text: 'Our cat Miso needs her deworming tablets every three months; next dose in May.' },
  { id: 'e14', session: 'home', text: 'Wifi at home: network name Larkspur, the router is behind the bookshelf.' },
  { id: 'e15', session: 'food', text: 'My sister is vegetarian and cannot eat mushrooms, keep that in mind for the party.' },
  { id: 'e16', session: 'food', text: 'The sourdough starter needs feeding twice a day: 50 g flour and 50 g water.' },
  { id: 'z1', session: 'zh-life', text: '我的生日是五月三号，每年都和家人一起过。' },
  { id: 'z2', session: 'zh-life', text: '下周二要去北京出差，住在国贸附近的酒店。' },
  { id: 'z3', session: 'zh-life', text: '我对花生过敏，吃了会起疹子，点菜时要注意。' },
  { id: 'z4', session: 'zh-work', text: '季度预算评审会定在周五上午，财务部的王经理主持。' },
  { id: 'z5', session: 'zh-work', text: '新项目的代码仓库迁移到了公司的私有服务器上。' },
  { id: 'z6', session: 'zh-home', text: '家里的备用钥匙放在门口蓝色花盆下面。' },
  { id: 'z7', session: 'zh-home', text: '女儿的钢琴课改到每周六下午三点。' },
  { id: 'z8', session: 'zh-home', text: '猫咪每三个月要吃一次驱虫药，下一次是五月。' },
  { id: 'z9', session: 'zh-life', text: '我最喜欢的咖啡店在学校东门对面，拿铁很好喝。' },
  { id: 'z10', session: 'zh-work', text: '年假还剩八天，打算十月份去云南旅行。' },
];

export const QUESTIONS: FixtureQuestion[] = [
  { lang: 'en', question: 'When does the ferry to Hydra leave?', evidence: ['e1'] },
  { lang: 'en', question: 'do I have to renew my passport?', evidence: ['e2'] },
  { lang: 'en', question: 'which hotel are we staying at in Kyoto', evidence: ['e3'] },
  { lang: 'en', question: 'when is my dentist appointment', evidence: ['e4'] },
  { lang: 'en', question: 'what medicine allergies do I have', evidence: ['e5'] },
  { lang: 'en', question: 'how long are my Sunday runs', evidence: ['e6'] },
  { lang: 'en', question: 'when are we reviewing the budget', evidence: ['e7'] },
  { lang: 'en', question: 'where is the staging db password kept', evidence: ['e8'] },
  { lang: 'en', question: 'who leads the Postgres migration and when is the cutover', evidence: ['e9'] },
  { lang: 'en', question: 'what did I promise the interns', evidence: ['e10'] },
  { lang: 'en', question: 'where did we hide the spare keys', evidence: ['e11'] },
  { lang: 'en', question: 'how old is the water heater', evidence: ['e12'] },
  { lang: 'en', question: 'when is Miso due for deworming', evidence: ['e13'] },
  { lang: 'en', question: 'what is the wifi network called', evidence: ['e14'] },
  { lang: 'en', question: 'what can my sister not eat', evidence: ['e15'] },
  { lang: 'en', question: 'how often should I feed the sourdough starter', evidence: ['e16'] },
  { lang: 'zh', question: '我生日是哪天', evidence: ['z1'] },
  { lang: 'zh', question: '去北京出差住哪里', evidence: ['z2'] },
  { lang: 'zh', question: '我对什么过敏', evidence: ['z3'] },
  { lang: 'zh', question: '预算评审会什么时候开', evidence: ['z4'] },
  { lang: 'zh', question: '代码仓库迁移到哪里了', evidence: ['z5'] },
  { lang: 'zh', question: '备用钥匙在哪', evidence: ['z6'] },
  { lang: 'zh', question: '钢琴课是什么时候', evidence: ['z7'] },
  { lang: 'zh', question: '猫什么时候吃驱虫药', evidence: ['z8'] },
  { lang: 'zh', question: '喜欢的咖啡店在哪里', evidence: ['z9'] },
  { lang: 'zh', question: '年假还有几天', evidence: ['z10'] },
];

// Distractor chatter: template sentences over the evidence's own words, so every question's
// words also occur in messages that do not answer it; first-person and question words as in
// real chat (a history is full of "I", "what", "when").
const EN_SUBJECTS = ['the ferry schedule', 'my passport photo', 'the hotel lobby', 'a dentist friend', 'the medicine cabinet', 'the running shoes',
  'the budget spreadsheet', 'the password manager', 'the migration guide', 'the interns', 'the keys to the car', 'the water bill',
  'the cat food', 'the wifi router', 'my sister', 'the bread recipe', 'the appointment calendar', 'the trip photos', 'the review notes', 'the party playlist'];
const EN_OPENERS = ['', 'I think ', 'I guess ', 'what about ', 'do you know when ', 'I have no idea how ', 'honestly, '];
const EN_VERBS = ['is on the table', 'came up again today', 'needs another look', 'was mentioned at lunch', 'reminds me of last summer',
  'is somewhere in the drawer', 'should be cheaper next year', 'was fine in the end', 'made everyone laugh', 'is not urgent'];
const ZH_SUBJECTS = ['生日蛋糕', '北京的天气', '花生酱', '预算表格', '代码评审', '钥匙扣', '钢琴老师', '猫粮', '咖啡机', '旅行照片', '出差报销', '花盆', '年终总结', '酒店早餐', '学校门口'];
const ZH_VERBS = ['今天又提到了', '放在桌子上了', '还需要再看看', '午饭时聊过', '下个月再说', '其实挺好的', '不太着急', '让大家都笑了'];

export function distractors(count: number): FixtureMessage[] {
  const out: FixtureMessage[] = [];
  let a = 7;
  const next = (n: number) => {
    a = (a * 1103515245 + 12345) % 2147483648;
    return a % n;
  };
  for (let i = 0; i < count; i++) {
    const text =
      i % 3 === 2
        ? `${ZH_SUBJECTS[next(ZH_SUBJECTS.length)]}${ZH_VERBS[next(ZH_VERBS.length)]}，${ZH_SUBJECTS[next(ZH_SUBJECTS.length)]}${ZH_VERBS[next(ZH_VERBS.length)]}。`
        : `${EN_OPENERS[next(EN_OPENERS.length)]}${EN_SUBJECTS[next(EN_SUBJECTS.length)]} ${EN_VERBS[next(EN_VERBS.length)]}, and ${EN_SUBJECTS[next(EN_SUBJECTS.length)]} ${EN_VERBS[next(EN_VERBS.length)]}.`;
    out.push({ id: `d${i}`, session: `chat-${i % 12}`, text });
  }
  return out;
}
