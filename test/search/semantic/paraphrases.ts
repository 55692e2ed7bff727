/**
 * The relevance set (docs/semantic-search.md, "Relevance"): each query with the one passage it
 * should find, written so that they share no word but the few function words in STOP_WORDS.
 */
export const STOP_WORDS = new Set(
  'a an the of to in on for and or but is are was were be been it its this that these those with as at by from we you they i he she our your their my me us do does did how what why when who which can could will would should about into over than then so if not no'.split(
    ' ',
  ),
);

export interface RelevancePair {
  query: string;
  passage: string[];
}

export const PAIRS: RelevancePair[] = [
  {
    query: 'central banks raising interest rates to fight inflation',
    passage: [
      'The Fed hiked borrowing costs again this month.',
      'They want prices to stop climbing so fast.',
      'Mortgages got a lot more expensive overnight.',
    ],
  },
  {
    query: 'electric car battery range',
    passage: [
      'My new EV drives four hundred miles between charges.',
      'The lithium pack is what makes that possible.',
      'Charging takes about half an hour at a supercharger.',
    ],
  },
  {
    query: 'baking sourdough bread at home',
    passage: [
      'I keep a starter going in my kitchen.',
      'Flour, water, salt, and a long fermentation overnight.',
      'The loaf comes out of the oven with a crackling crust.',
    ],
  },
  {
    query: 'soccer striker scored two goals',
    passage: [
      'Their forward found the net twice before halftime.',
      'Both finishes went into the bottom corner.',
      'The keeper had no chance on either shot.',
    ],
  },
  {
    query: 'climate change melting glaciers',
    passage: [
      'Global warming is shrinking the ice sheets in Greenland.',
      'Alpine ice has retreated hundreds of meters since 1980.',
      'Sea levels keep rising as meltwater pours out.',
    ],
  },
  {
    query: 'startup raised venture capital funding',
    passage: [
      'The founders closed a Series A round last week.',
      'Investors put in twelve million dollars.',
      'They will hire engineers with the new money.',
    ],
  },
  {
    query: 'sleep deprivation harms memory',
    passage: [
      'If you stay awake all night, recall suffers.',
      'The brain consolidates learning while resting.',
      'Students who skip rest forget more before exams.',
    ],
  },
  {
    query: 'stock market crash panic selling',
    passage: [
      'Shares plunged as investors dumped equities.',
      'The Dow lost a thousand points in one afternoon.',
      'Traders were terrified and fled to bonds.',
    ],
  },
  {
    query: 'learning to play guitar chords',
    passage: [
      'Beginners should practice strumming basic shapes.',
      'Finger positions on the fretboard hurt at first.',
      'After a few weeks your fingertips toughen up.',
    ],
  },
  {
    query: 'vaccine trial results immune response',
    passage: [
      'The shot produced strong antibody levels in volunteers.',
      'Researchers reported efficacy above ninety percent.',
      'Side effects were mild, mostly sore arms.',
    ],
  },
  {
    query: 'housing prices too expensive for young people',
    passage: [
      'Millennials cannot afford to buy homes anymore.',
      'Rents eat half their paychecks.',
      'Property has become unaffordable in most cities.',
    ],
  },
  {
    query: 'artificial intelligence replacing jobs',
    passage: [
      'Automation and machine learning will eliminate many occupations.',
      'Robots already handle warehouse work.',
      'Workers worry software will make them redundant.',
    ],
  },
  {
    query: 'running a marathon training plan',
    passage: [
      'I logged forty miles per week before the race.',
      'Long runs on Sunday built my endurance.',
      'Tapering before the twenty six mile event matters.',
    ],
  },
  {
    query: 'coffee caffeine makes me anxious',
    passage: [
      'Too much espresso gives me jitters and nervousness.',
      'My heart races after a third latte.',
      'I switched to decaf to calm down.',
    ],
  },
  {
    query: 'rocket launch to mars',
    passage: [
      'SpaceX wants to send astronauts to the red planet.',
      'The spacecraft would travel seven months through space.',
      'Landing on another world is incredibly hard.',
    ],
  },
  {
    query: 'divorce custody of children',
    passage: [
      'After the separation, the kids live with their mom during the week.',
      'Their dad gets weekends.',
      'Parents fighting over visitation is painful for everyone.',
    ],
  },
  {
    query: 'wildfire smoke evacuation',
    passage: [
      'Flames forced thousands of residents to flee their homes.',
      'The air was thick with ash for days.',
      'Firefighters battled the blaze across the hills.',
    ],
  },
  {
    query: 'chess grandmaster opening strategy',
    passage: [
      'Magnus prefers quiet positional setups early.',
      'He often plays the Sicilian with black.',
      'Controlling the center with pawns is key.',
    ],
  },
  {
    query: 'cryptocurrency bitcoin price volatility',
    passage: [
      'Digital coins swing wildly from day to day.',
      'BTC dropped twenty percent overnight.',
      'Crypto traders love and hate those swings.',
    ],
  },
  {
    query: 'doctor prescribed antibiotics for infection',
    passage: [
      'My physician gave me penicillin for strep throat.',
      'The bacteria cleared up after ten days of pills.',
      'Finish the whole course of medication.',
    ],
  },
  {
    query: 'remote work from home productivity',
    passage: [
      'Since the pandemic I telecommute every day.',
      'Without commuting, I get more done.',
      'Zoom calls replaced office meetings.',
    ],
  },
  {
    query: 'election voters polls candidate',
    passage: [
      'Surveys show the senator leading among independents.',
      'Turnout on ballot day will decide it.',
      'Campaigns are spending millions on ads.',
    ],
  },
  {
    query: 'dog training puppy obedience',
    passage: [
      'Teach your pup to sit using treats.',
      'Reward good behavior right away.',
      'Leash walks get easier after a few weeks.',
    ],
  },
  {
    query: 'ocean pollution plastic waste',
    passage: [
      'Bottles and bags are choking marine life.',
      'Sea turtles swallow debris thinking it is food.',
      'Trash gyres float across the Pacific.',
    ],
  },
  {
    query: 'movie director won an oscar',
    passage: [
      'The filmmaker took home the Academy Award.',
      'Her picture also earned best actress.',
      'Hollywood celebrated at the ceremony in Los Angeles.',
    ],
  },
  {
    query: 'depression therapy mental health',
    passage: [
      'Counseling helped me through feeling hopeless.',
      'My psychologist taught me cognitive behavioral techniques.',
      'Sadness lifted slowly over months.',
    ],
  },
  {
    query: 'tax cuts government budget deficit',
    passage: [
      'Lowering levies will widen the federal shortfall.',
      'Washington already borrows trillions.',
      'Congress must decide on spending priorities.',
    ],
  },
  {
    query: 'gardening growing tomatoes',
    passage: [
      'I planted vegetables in raised beds this spring.',
      'Seedlings need sunlight and regular watering.',
      'By August the vines were heavy with fruit.',
    ],
  },
  {
    query: 'smartphone camera quality',
    passage: [
      'The new iPhone takes stunning photos in low light.',
      'Its lens captures sharp pictures.',
      'Pixel phones also have great cameras.',
    ],
  },
  {
    query: 'airline flight delays travel chaos',
    passage: [
      'Passengers were stuck at the airport for hours.',
      'Planes sat on the tarmac as crews waited.',
      'Cancelled departures ruined holiday trips.',
    ],
  },
  {
    query: 'nuclear power plant energy',
    passage: [
      'Reactors generate electricity without carbon emissions.',
      'Uranium fission heats water into steam.',
      'Some countries are building new atomic stations.',
    ],
  },
  {
    query: 'quitting smoking cigarettes',
    passage: [
      'I finally kicked my nicotine habit.',
      'Patches and gum helped with cravings.',
      'My lungs feel much better after a year tobacco free.',
    ],
  },
  {
    query: 'immigration border policy',
    passage: [
      'Migrants crossing from Mexico face new restrictions.',
      'Asylum seekers wait months for hearings.',
      'Lawmakers debate deportations.',
    ],
  },
  {
    query: 'video game console release',
    passage: [
      'Sony unveiled the next PlayStation.',
      'Gamers lined up to buy Xbox hardware.',
      'Nintendo also announced a handheld.',
    ],
  },
  {
    query: 'weight loss diet exercise',
    passage: [
      'I dropped twenty pounds by eating fewer calories.',
      'Working out three times weekly helped too.',
      'Cutting sugar made the biggest difference.',
    ],
  },
  {
    query: 'earthquake tsunami warning',
    passage: [
      'A magnitude eight quake struck off Japan.',
      'Coastal towns were told to move to higher ground.',
      'Waves reached the shore within minutes.',
    ],
  },
  {
    query: 'wine tasting vineyard',
    passage: [
      'We visited a winery in Napa.',
      'The cabernet had notes of cherry and oak.',
      'Grapes are harvested in the fall.',
    ],
  },
  {
    query: 'hacker data breach passwords stolen',
    passage: [
      'Cybercriminals leaked millions of user credentials.',
      'The company admitted its servers were compromised.',
      'Customers should change logins immediately.',
    ],
  },
  {
    query: 'pregnancy expecting first baby',
    passage: [
      'My wife is due in March.',
      'We are nervous new parents.',
      'The ultrasound showed a healthy infant.',
    ],
  },
  {
    query: 'basketball playoffs championship',
    passage: [
      'The Lakers advanced to the NBA finals.',
      'LeBron dunked in the fourth quarter.',
      'Fans celebrated the title win.',
    ],
  },
  {
    query: 'book novel author writing',
    passage: [
      'The writer spent years drafting her fiction.',
      'Publishers loved the manuscript.',
      'It became a bestseller on the list.',
    ],
  },
  {
    query: 'hurricane storm damage flooding',
    passage: [
      'The cyclone tore roofs off houses.',
      'Torrential rain left streets underwater.',
      'Residents waited days for electricity.',
    ],
  },
  {
    query: 'retirement savings pension',
    passage: [
      'Put money into your 401k early.',
      'Compound growth builds a nest egg.',
      'Social Security alone will not cover old age.',
    ],
  },
  {
    query: 'teacher classroom students school',
    passage: [
      'Educators struggle with crowded lessons.',
      'Pupils need more attention.',
      'Kindergarten enrollment rose this year.',
    ],
  },
  {
    query: 'oil prices gasoline',
    passage: [
      'Crude climbed above ninety dollars a barrel.',
      'Fuel at the pump costs more.',
      'OPEC cut production again.',
    ],
  },
];
