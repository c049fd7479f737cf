"""The attributes of a user that statements give values of: their examples and their words.

Tables only, read by :mod:`memoryd.ingest.attributes`. Each attribute is
single-valued (a new value replaces the old: where the user lives, works,
what they drive) or not (values accumulate: pets, hobbies, languages
spoken), with a few example statements in English and Chinese (what an
English sentence is compared with, by the bundled embedder) and the words
that name its subject matter. Written from the tuning half of the
life-story set (``bench/data/truth/tune.json``); measured on the confirming
half, whose sentences appear nowhere here.
"""

from __future__ import annotations

import re

# attribute -> (single-valued, example statements)
ATTRIBUTES: dict[str, tuple[bool, tuple[str, ...]]] = {
    "residence": (
        True,
        (
            "I live in Madrid.",
            "We moved to a new city last month.",
            "I relocated to another country for good.",
            "My home is in Toronto now.",
            "I'm based in London these days.",
            "我住在上海。",
            "我们搬家到成都了。",
            "现在定居在深圳。",
        ),
    ),
    "work": (
        True,
        (
            "I work as a nurse at the hospital.",
            "I got a new job at Google.",
            "I joined a startup as an engineer.",
            "I was hired by a bank.",
            "I changed jobs and now work at Amazon.",
            "I quit my job and started at another company.",
            "我在腾讯上班。",
            "我换工作了，去了一家新公司。",
            "我是一名老师。",
            "我入职了一家互联网公司做产品经理。",
        ),
    ),
    "diet": (
        True,
        (
            "I am vegetarian.",
            "I follow a vegan diet.",
            "I eat meat again.",
            "I'm on a keto diet.",
            "I don't eat gluten.",
            "我吃素。",
            "我开始吃肉了。",
            "我在减肥，只吃低碳水的东西。",
        ),
    ),
    "car": (
        True,
        (
            "I drive a Honda Civic.",
            "I bought a new car, a Tesla.",
            "I sold my car.",
            "My car is a Toyota.",
            "我开的是一辆丰田。",
            "我买了新车，换成了比亚迪。",
            "我把车卖了。",
        ),
    ),
    "phone": (
        True,
        (
            "My phone is an iPhone.",
            "I switched to an Android phone.",
            "I got a new Samsung phone.",
            "我用的手机是华为。",
            "我换了个新手机，小米的。",
        ),
    ),
    "editor": (
        True,
        (
            "I code in VS Code.",
            "My editor is Vim.",
            "I switched my IDE to IntelliJ.",
            "I write code in Emacs.",
            "我写代码用VS Code。",
            "我的编辑器换成了Vim。",
        ),
    ),
    "drink": (
        True,
        (
            "I drink coffee every morning.",
            "I switched from coffee to tea.",
            "I quit drinking alcohol.",
            "My usual drink is beer.",
            "我每天早上喝咖啡。",
            "我戒酒了。",
            "我改喝茶了。",
        ),
    ),
    "partner": (
        True,
        (
            "My girlfriend's name is Anna.",
            "I'm married to David.",
            "We broke up.",
            "I'm dating someone new.",
            "I got engaged.",
            "我有女朋友了。",
            "我们分手了。",
            "我结婚了。",
        ),
    ),
    "gym": (
        True,
        (
            "I go to the gym at Equinox.",
            "I joined a new gym.",
            "I cancelled my gym membership.",
            "我办了一张健身房的卡。",
            "我换了一家健身房。",
        ),
    ),
    "school": (
        True,
        (
            "I study at the university.",
            "I'm doing a master's degree.",
            "I got into a PhD program.",
            "我在大学读研究生。",
            "我考上了研究生。",
        ),
    ),
    "team": (
        True,
        (
            "I'm a fan of the Lakers.",
            "My favourite football team is Arsenal.",
            "I support the Yankees.",
            "我是湖人的球迷。",
            "我支持皇马。",
        ),
    ),
    "music_app": (
        True,
        (
            "I listen to music on Spotify.",
            "I switched to Apple Music.",
            "我用网易云听歌。",
            "我听歌换成了QQ音乐。",
        ),
    ),
    "smoking": (
        True,
        (
            "I smoke a pack a day.",
            "I quit smoking.",
            "我抽烟。",
            "我戒烟了。",
        ),
    ),
    "os": (
        True,
        (
            "I use a Mac.",
            "I switched to Linux on my laptop.",
            "My computer runs Windows.",
            "我电脑用的是Windows系统。",
            "我换成Mac了。",
        ),
    ),
    "food": (
        True,
        (
            "My favourite food is sushi.",
            "I love Italian cuisine.",
            "我最喜欢吃火锅。",
            "我爱吃湘菜。",
        ),
    ),
    "eyewear": (
        True,
        (
            "I wear glasses.",
            "I switched to contact lenses.",
            "I had laser eye surgery.",
            "我戴眼镜。",
            "我做了近视手术。",
        ),
    ),
    "instrument": (
        False,
        (
            "I play the piano.",
            "I started learning the violin.",
            "我会弹钢琴。",
            "我在学吉他。",
        ),
    ),
    "children": (
        False,
        (
            "Our son is called Leo.",
            "My daughter was born last week.",
            "We have two kids.",
            "我儿子叫小宝。",
            "我女儿今年五岁了。",
        ),
    ),
    "pet": (
        False,
        (
            "I have a dog named Rex.",
            "We adopted a cat.",
            "我家养了一只猫。",
            "我养了一条狗。",
        ),
    ),
    "hobby": (
        False,
        (
            "I love hiking on weekends.",
            "I started learning the guitar.",
            "My hobby is painting.",
            "我喜欢周末去爬山。",
            "我最近开始学画画。",
        ),
    ),
    "name": (
        True,
        (
            "My name is Sam.",
            "Call me Alex.",
            "I go by Jo.",
            "我叫李明。",
            "我的名字是王芳。",
        ),
    ),
    "language": (
        False,
        (
            "I speak Spanish.",
            "I'm learning Japanese.",
            "我会说日语。",
            "我在学西班牙语。",
        ),
    ),
}

# what a sentence near an attribute's topic says when it gives no value of the user's: an
# instruction or a to-do, a trip or a visit, news of a place or a firm, someone else's doing,
# a try-out or a review. A sentence nearer these than any attribute's examples names none.
# English only (Chinese is read by its words); written apart from the life-story sets.
NOT_A_VALUE = "-"
NOT_A_VALUE_EXAMPLES = (
    "Remind me to call the plumber tomorrow.",
    "To do: renew the insurance before Friday.",
    "Step 2: open the settings and restart the app.",
    "Note to self: bring the charger to the meeting.",
    "We spent a long weekend in Rome walking between museums.",
    "Just back from a conference trip, exhausted.",
    "Back from five days in Prague, the old town was beautiful.",
    "Buy a gift for my sister's birthday this weekend.",
    "The new bakery on the corner opened this morning.",
    "That company announced layoffs today.",
    "Someone took my parking spot again.",
    "Tried the new ramen place, it was fine.",
    "Test drove a friend's motorbike for fun.",
    "Here is my review of the product for the newsletter.",
)

# the same in Chinese, read by its words: what was heard said, a show attended, a drink or
# a meal someone else bought
NOT_A_VALUE_ZH = re.compile(r"据说|听说|听了场|看了场|去听了|去看了|请(?:我)?喝了|请(?:我)?吃了")

# words that name an attribute's subject matter: English words (bounded by non-letters, so
# "GoLand" is found inside Chinese text too) and Chinese ones. In English each found adds
# CUE_BONUS to the attribute's similarity; Chinese is read by these words alone, the bundled
# embedder reading English only. Written from the tuning half, measured on the confirming.
CUE_BONUS = 0.15
_CUE_WORDS: dict[str, tuple[str, str]] = {
    "residence": (
        r"liv(?:e|es|ed|ing)|mov(?:e|ed|ing)|relocat\w*|based in|home|apartment|flat|house|"
        r"neighbou?rhood|city|settled|(?:i'?m|i am|we'?re|we are)\s+(?:now\s+)?in",
        r"住|搬|定居|落户|租房|老家|安顿|调到|城市",
    ),
    "work": (
        r"work(?:s|ed|ing)?|job|hired|joined|company|startup|employer|quit|promot\w*|career|"
        r"position|role|office|intern\w*|left \w+ for|started at|new gig|working for|"
        r"work for|offer|onboarding|coworkers?|colleagues?|boss|teach(?:es|ing)? at|professor|"
        r"freelanc\w*|self-employed|contract(?:or|ing)|employ\w*|salary|fired|laid off|"
        r"resign\w*|promoted|as an? (?:\w+ )?\w+(?:er|or|ist|ant|ian|ive|eer|ect)|"
        r"(?:i'?m|i am) (?:now )?an? [\w -]{2,30} (?:at|for|with)",
        r"上班|工作|入职|跳槽|跳到|跳去|公司|辞职|离职|单位|岗位|实习|创业|打工|开了家|教职|"
        r"offer|上岗|转行|职位|同事|老板|领导|工资|加班|裁员|被录用|"
        r"(?:做|当|是一名|是个)[^，。,.!！]{0,8}(?:开发|工程师|经理|老师|教师|医生|护士|律师|会计|"
        r"策划|运营|设计|算法|销售|研究|助理|分析师|咨询|程序员|主管|总监|编辑|记者|厨师|司机|后端|"
        r"前端|产品)",
    ),
    "car": (
        r"driv(?:e|es|ing)|drove|car|truck|suv|sedan|jeep|tesla|toyota|honda|bmw|ford|subaru|"
        r"prius|corolla|civic",
        r"车|驾照|辆|开的是|丰田|本田|大众|宝马|奔驰|奥迪|特斯拉|比亚迪|蔚来|小鹏|吉利|别克|马自达|日产",
    ),
    "phone": (
        r"phone|iphone|android|pixel|galaxy|smartphone|samsung|oneplus|xiaomi|huawei|motorola",
        r"手机|华为|小米|苹果|三星|荣耀",
    ),
    "os": (
        r"macos|mac|macbook|linux|windows|ubuntu|fedora|debian|arch|operating system|distro",
        r"系统|装了.{0,4}(?:Linux|Windows|Mac)",
    ),
    "editor": (
        r"editor|ide|vim|neovim|emacs|vs ?code|intellij|sublime|pycharm|webstorm|goland|"
        r"cursor|zed|helix",
        r"编辑器|写代码",
    ),
    "drink": (
        r"coffee|tea|beer|wine|drink\w*|alcohol|espresso|latte|whiskey|soda|booze|sober|ipa",
        r"咖啡|茶|酒|喝|美式|拿铁|饮料|奶茶",
    ),
    "diet": (
        r"vegan|vegetarian|meat|keto|gluten|diet|pescatarian|paleo|carbs?",
        r"吃素|吃肉|素食|饮食|减肥|忌口|生酮|戒糖",
    ),
    "food": (
        r"food|cuisine|dish|sushi|pizza|ramen|tacos|curry",
        r"川菜|粤菜|湘菜|鲁菜|日料|火锅|烧烤|菜系|口味",
    ),
    "partner": (
        r"girlfriend|boyfriend|married|wife|husband|dating|engaged|broke up|single|"
        r"divorc\w*|fianc\w*|partner",
        r"男朋友|女朋友|结婚|分手|离婚|对象|单身|脱单",
    ),
    "gym": (r"gym|fitness|workouts?|crossfit|membership", r"健身|团课|私教|办卡"),
    "school": (
        r"university|college|degree|phd|master'?s|school|grad|semester|enrolled",
        r"读研|大学|研究生|博士|读博|本科|学校|考研|上学|入学|报到|学院|专业",
    ),
    "team": (
        r"fan of|support(?:er|ing)?|team|club|season tickets?",
        r"球迷|主队|队|铁粉|粉丝|转粉",
    ),
    "music_app": (
        r"spotify|apple music|music|playlist|streaming",
        r"听歌|音乐|歌单|网易云",
    ),
    "smoking": (r"smok\w*|cigarettes?|vap\w*|nicotine", r"抽烟|吸烟|戒烟|烟"),
    "eyewear": (r"glasses|contacts|contact lenses|lasik|eyesight", r"眼镜|隐形|近视|飞秒"),
    "children": (
        r"sons?|daughters?|kids?|child|children|baby|babies|toddler|newborn",
        r"儿子|女儿|孩子|老大|老二|二胎|宝宝|闺女|娃|出生",
    ),
    "pet": (r"dog|cat|puppy|kitten|pet|adopted", r"狗|猫|宠物"),
    "hobby": (
        r"hobby|hiking|painting|climbing|knitting|pottery|photography|running|surfing|"
        r"skiing|cycling",
        r"爱好|画画|爬山|羽毛球|网球|滑雪|钓鱼|摄影|跑步|晨跑|游泳|潜水|飞盘|入坑|迷上",
    ),
    "instrument": (
        r"piano|guitar|violin|drums|cello|ukulele|instrument|saxophone|flute|bass",
        r"钢琴|吉他|小提琴|大提琴|二胡|古筝|琵琶|笛子|长笛|萨克斯|手风琴|口琴|尤克里里|架子鼓|乐器",
    ),
    "name": (r"my name|call me|i go by|my nickname", r"我叫|我的名字|我的小名"),
    "language": (
        r"speak|spanish|japanese|french|german|mandarin|language|fluent|conversation|grammar|"
        r"vocabulary",
        r"说.{0,6}语|学.{0,3}语|会说|普通话|粤语|方言|日语|英语|法语|德语|西班牙语",
    ),
}
CUES: dict[str, re.Pattern[str]] = {
    name: re.compile(rf"(?<![a-z])(?:{en})(?![a-z])|{zh}", re.IGNORECASE)
    for name, (en, zh) in _CUE_WORDS.items()
}
